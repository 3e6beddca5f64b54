/**
 * Issue 20's small-versus-large table: one account grown 30× (200 -> 6,000
 * contacts and tickets, 50 -> 1,500 users), the same reads before and after.
 * Besides the time (median of a few calls through the gateway), it prints the
 * work: the DynamoDB requests and the items the store read, counted by the
 * proxy the functions reach DynamoDB Local through.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

const RUNS = 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Items written per seeding step: a step that fails is written again whole (puts of the same items, so nothing twice). */
const SEED_STEP = 2_000;

/**
 * Seed items 8 batches at a time. On a loaded machine a batch can outlast the client's 5 s request timeout three times
 * running (the full bench's 20,000-ticket views seeding did, and ended the run), so a step that fails is tried again,
 * up to five times, after a pause that grows.
 */
const putAll = async (items: Record<string, unknown>[]) => {
  const { batchPut } = await import('#shared/db/query.ts');
  for (let i = 0; i < items.length; i += SEED_STEP) {
    const step = items.slice(i, i + SEED_STEP);
    for (let attempt = 1; ; attempt++) {
      try {
        await batchPut(step, { concurrency: 8 });
        break;
      } catch (err) {
        if (attempt === 5) throw err;
        console.warn(`seeding: a step of ${step.length} items failed (${(err as Error).name}); writing it again in ${attempt * 5} s`);
        // A store busy with other work gets a moment before the step comes again.
        await sleep(attempt * 5_000);
      }
    }
  }
};

/**
 * Records of one account written straight to the table, as the API's creates
 * write them (the repositories' own write builders), stamped a day back and
 * 10 ms apart: long settled for the incremental export (bench/history.ts).
 */
export async function recordSeeder(accountId: string) {
  const { newId } = await import('#shared/ids.ts');
  const { createContactWrites } = await import('#shared/contacts/repository.ts');
  const { replaceTicketWrite, ticketWordWrites } = await import('#shared/tickets/repository.ts');
  const { listCounter } = await import('#shared/db/list-counter.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const base = Date.now() - 86_400_000;
  let seq = 0;
  const at = () => new Date(base + seq++ * 10);
  const contact = (t: Date, name: string, email: string) =>
    createContactWrites({ id: newId('con', t.getTime()), accountId, name, email, organizationId: null, notes: null, createdAt: t.toISOString(), updatedAt: t.toISOString(), version: 1 }, null).flatMap(
      (w) => (w.item.Put ? [w.item.Put.Item!] : []),
    );
  /** A ticket's item and its word items (decisions §16), as its create writes them. */
  const ticket = (t: Date, over: Record<string, unknown> = {}) => {
    const record = {
      id: newId('tkt', t.getTime()),
      accountId,
      subject: 'Growth',
      status: 'open',
      priority: 'normal',
      type: 'question',
      assigneeId: null,
      requesterEmail: null,
      requesterName: null,
      groupId: null,
      tags: [],
      customFields: [],
      createdAt: t.toISOString(),
      updatedAt: t.toISOString(),
      version: 1,
      ...over,
    } as never;
    return [replaceTicketWrite(record, 0), ...ticketWordWrites(null, record)].map((w) => w.item.Put!.Item!);
  };
  /** Move the contacts' list counter by `n`: it moves with each create in the API's transactions; seeded items move it here. */
  const countContacts = (n: number) => transactWrite([listCounter.write(accountId, 'CONTACTS', n)]);
  return {
    /** Before every seeded record. */
    start: new Date(base),
    at,
    contact,
    ticket,
    /** How many stamps were given out. */
    seq: () => seq,
    putAll,
    countContacts,
    /** `contacts` and `tickets` more filler records. */
    async add(contacts: number, tickets: number) {
      const items: Record<string, unknown>[] = [];
      for (let i = 0; i < contacts; i++) items.push(...contact(at(), `Filler Person ${seq}`, `filler${seq}@bulk.example`));
      for (let i = 0; i < tickets; i++) items.push(...ticket(at()));
      await putAll(items);
      await countContacts(contacts);
    },
  };
}

export async function runGrowthBench(opts: { call: Call; store: DynamoDbProxy; createAccount: () => Promise<{ accountId: string; ownerId: string; apiKey: string }> }) {
  const acct = await opts.createAccount();
  const call: Call = (m, p, b) => opts.call(m, p, b, acct.apiKey);
  const seed = await recordSeeder(acct.accountId);
  const { at, contact, ticket } = seed;

  // The oldest records: the one match of each read below.
  const agent = await call('POST', '/playbook/api/v1/users', { email: 'quentin.oldest@agents.example', name: 'Quentin Oldest', role: 'member', send_invitation: false });
  const first = at();
  await putAll([...contact(first, 'Ulrike Oldest', 'ulrike@first.example'), ...ticket(first, { subject: 'Oldest printer', priority: 'urgent', status: 'pending', assigneeId: agent.id })]);
  await seed.countContacts(1);
  const grow = async (contacts: number, tickets: number, users: number) => {
    await seed.add(contacts, tickets);
    for (let i = 0; i < users; i += 16)
      await Promise.all(
        Array.from({ length: Math.min(16, users - i) }, (_, k) =>
          call('POST', '/playbook/api/v1/users', { email: `member${i + k}.${seed.seq()}@agents.example`, name: `Member ${i + k}`, role: 'member', send_invitation: false }),
        ),
      );
  };

  const READS: [string, () => string][] = [
    ['first page of contacts', () => '/helpdesk/api/contacts?limit=15'],
    ['contact search for the oldest contact', () => '/helpdesk/api/contacts?search=ulrike'],
    ['last page of contacts', () => `/helpdesk/api/contacts?limit=15&page=${lastPage}`],
    ['tickets priority=urgent (the oldest)', () => '/helpdesk/api/v1/tickets?priority=urgent'],
    ['ticket search for the oldest ticket', () => '/helpdesk/api/v1/tickets?search=printer'],
    ['ticket search with status=pending', () => '/helpdesk/api/v1/tickets?search=printer&status=pending'],
    ['tickets status=pending&assignee_id (the oldest)', () => `/helpdesk/api/v1/tickets?status=pending&assignee_id=${agent.id}`],
    ['user search for the oldest user', () => '/playbook/api/v1/users?search=quentin'],
  ];
  let lastPage = 1;
  const measure = async () => {
    const total = (await call('GET', '/helpdesk/api/contacts?limit=15')).meta.total as number;
    lastPage = Math.max(1, Math.ceil(total / 15));
    const out = new Map<string, { ms: number; requests: number; items: number }>();
    for (const [name, path] of READS) {
      const times: number[] = [];
      let work = { requests: 0, itemsRead: 0 };
      for (let r = 0; r < RUNS; r++) {
        opts.store.reset();
        const t = performance.now();
        await call('GET', path());
        times.push(performance.now() - t);
        work = opts.store.reset();
      }
      out.set(name, { ms: median(times), requests: work.requests, items: work.itemsRead });
    }
    return out;
  };

  const before = opts.store.consumedCapacity;
  opts.store.consumedCapacity = true;
  try {
    await grow(199, 199, 49);
    const small = await measure();
    await grow(5_800, 5_800, 1_450);
    const large = await measure();
    console.log('\nGrowth (issue 20): one account grown 30x (200 -> 6,000 contacts and tickets, 50 -> 1,500 users); median of 5 calls, and the work of one call\n');
    const rows = [['read', '200: ms / requests / items read', '6,000: ms / requests / items read', 'time growth', 'items growth']];
    for (const [name] of READS) {
      const s = small.get(name)!;
      const l = large.get(name)!;
      rows.push([
        name,
        `${s.ms.toFixed(1)} / ${s.requests} / ${s.items}`,
        `${l.ms.toFixed(1)} / ${l.requests} / ${l.items}`,
        `${(l.ms / s.ms).toFixed(2)}x`,
        `${(l.items / Math.max(1, s.items)).toFixed(2)}x`,
      ]);
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
    console.log('(items read include the authorizer and rate-limit bookkeeping of the request; a deep page reads its offset by nature: cursors are the scalable path)');
  } finally {
    opts.store.consumedCapacity = before;
  }
}
