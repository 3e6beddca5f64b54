import { beforeAll, describe, expect, it } from 'vitest';
import { clockPast, eventually } from '../support/wait.ts';
import { usePipeline } from '../support/pipeline.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newField, newTicket, storeTickets, ticketRecord, TICKETS, type Desk, type Json } from '../support/desk.ts';
import { createTicketInStore } from '../support/store.ts';

/**
 * Ticket history, the account's audit log and the incremental export
 * (decisions §15), through the API on the local emulators.
 */
const { client } = useGateway();
const { account, pipeline } = usePipeline(['automations']);

const AUDITS = '/helpdesk/api/v1/audits';
const EXPORTS = '/helpdesk/api/v1/exports';
const MESSAGES = '/helpdesk/api/messages';

let acct: TestAccount;
let admin: Desk;
let agent: Desk;
let session: string;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  const member = await acct.addUser('member');
  agent = as(client, member.key);
  session = await acct.session(acct.ownerId);
});

const auditsOf = async (d: Desk, ticketId: string, query = ''): Promise<Json[]> => {
  const res = await d.get(`${TICKETS}/${ticketId}/audits?page_size=100${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.audits;
};

/** Wait on a fact: the check's first non-null answer. */
const eventuallyFound = async <T>(check: () => Promise<T | null>, timeoutMs: number, what: string): Promise<T> => (await eventually(check, timeoutMs, what))!;

/**
 * Wait, without asking, until a change stamped at `stamp` (ISO 8601 or epoch ms) is past the export's settle line
 * (SETTLE_MS): no request can hurry the line, and polling the export toward it made hundreds of requests a test.
 */
async function settled(stamp: string | number): Promise<void> {
  const { SETTLE_MS } = await import('#shared/exports/service.ts');
  await clockPast(new Date(new Date(stamp).getTime() + SETTLE_MS).toISOString());
}

/** Every change of a kind from `start` until endOfStream, following cursor; also the last cursor. */
async function exportAll(d: Desk, kind: string, start: string, pageSize = 1000): Promise<{ items: Json[]; cursor: string; pages: number }> {
  let res = await d.get(`${EXPORTS}/${kind}?start_time=${encodeURIComponent(start)}&page_size=${pageSize}`);
  const items: Json[] = [];
  let pages = 0;
  for (;;) {
    expect(res.status, res.text).toBe(200);
    pages++;
    items.push(...res.body.items);
    if (res.body.endOfStream) return { items, cursor: res.body.cursor, pages };
    res = await d.get(`${EXPORTS}/${kind}?cursor=${encodeURIComponent(res.body.cursor)}&page_size=${pageSize}`);
  }
}

async function resume(d: Desk, kind: string, cursor: string): Promise<{ items: Json[]; cursor: string }> {
  const items: Json[] = [];
  for (;;) {
    const res = await d.get(`${EXPORTS}/${kind}?cursor=${encodeURIComponent(cursor)}`);
    expect(res.status, res.text).toBe(200);
    items.push(...res.body.items);
    cursor = res.body.cursor;
    if (res.body.endOfStream) return { items, cursor };
  }
}

describe("a ticket's history", () => {
  it('records a create, a PUT, a message with ticket_update and a message alone, oldest first, with actor and via', async () => {
    const t = await newTicket(admin, { subject: 'Audit me', priority: 'low', tags: ['a'] });
    const updated = await admin.put(`${TICKETS}/${t.id}`, { ticket: { priority: 'high', status: 'open' } });
    expect(updated.status).toBe(200);
    const withUpdate = await client.request('POST', MESSAGES, { token: session, body: { ticket_id: t.id, type: 'response', content: '<p>On it</p>', ticket_update: { status: 'pending' } } });
    expect(withUpdate.status, withUpdate.text).toBe(201);
    const alone = await client.request('POST', MESSAGES, { token: session, body: { ticket_id: t.id, type: 'note', content: 'internal' } });
    expect(alone.status, alone.text).toBe(201);

    const audits = await auditsOf(agent, t.id);

    expect(audits.map((a) => a.via)).toEqual(['api', 'api', 'message', 'message']);
    const [created, put, message, note] = audits;
    expect(created).toMatchObject({ resource: { type: 'ticket', id: t.id }, actor: { type: 'user', id: acct.ownerId }, messageId: null, deleted: false });
    expect(created.id).toMatch(/^aud_/);
    expect(created.changes).toEqual(
      expect.arrayContaining([
        { field: 'subject', from: null, to: 'Audit me' },
        { field: 'priority', from: null, to: 'low' },
        { field: 'tags', from: null, to: ['a'] },
        { field: 'status', from: null, to: 'new' },
      ]),
    );
    expect(put.changes).toEqual([
      { field: 'status', from: 'new', to: 'open' },
      { field: 'priority', from: 'low', to: 'high' },
    ]);
    expect(put.createdAt).toBe(updated.body.ticket.updatedAt);
    expect(message).toMatchObject({ messageId: withUpdate.body.data.id, changes: [{ field: 'status', from: 'open', to: 'pending' }], actor: { type: 'user', id: acct.ownerId } });
    expect(note).toMatchObject({ messageId: alone.body.data.id, changes: [] });

    const newest = await auditsOf(agent, t.id, '&sort_order=desc');
    expect(newest.map((a) => a.id)).toEqual(audits.map((a) => a.id).reverse());
  });

  it('names custom fields by key, and pages with links.next', async () => {
    const field = await newField(admin, { type: 'text', title: 'Order ref' });
    const t = await newTicket(admin, { customFields: [{ id: field.id, value: 'A-1' }] });
    for (const v of ['A-2', 'A-3']) expect((await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: field.id, value: v }] } })).status).toBe(200);

    const first = await admin.get(`${TICKETS}/${t.id}/audits?page_size=2`);
    expect(first.body.meta).toEqual({ pageSize: 2, hasMore: true });
    const second = await admin.get(first.body.links.next);
    expect(second.body.meta.hasMore).toBe(false);
    expect(second.body.links.next).toBeNull();
    const all = [...first.body.audits, ...second.body.audits];

    expect(all).toHaveLength(3);
    expect(all[0].changes).toContainEqual({ field: `customFields.${field.fieldKey}`, from: null, to: 'A-1' });
    expect(all[1].changes).toEqual([{ field: `customFields.${field.fieldKey}`, from: 'A-1', to: 'A-2' }]);
    expect(all[2].changes).toEqual([{ field: `customFields.${field.fieldKey}`, from: 'A-2', to: 'A-3' }]);
  });

  it('20 concurrent updates of one ticket give 20 audits in commit order', async () => {
    const t = await newTicket(admin, { subject: 'start' });

    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => admin.put(`${TICKETS}/${t.id}`, { ticket: { subject: `s${i}` } })));

    expect(answers.map((r) => r.status)).toEqual(Array(20).fill(200));
    const updates = (await auditsOf(admin, t.id)).slice(1);
    expect(updates).toHaveLength(20);
    // Commit order: each audit starts from the value the one before it left.
    let value = 'start';
    for (const a of updates) {
      expect(a.changes).toEqual([{ field: 'subject', from: value, to: expect.stringMatching(/^s\d+$/) }]);
      value = a.changes[0].to;
    }
    expect(value).toBe((await admin.get(`${TICKETS}/${t.id}`)).body.ticket.subject);
    expect(new Set(updates.map((a) => a.changes[0].to)).size).toBe(20);
  });

  it('a refused write leaves no audit', async () => {
    const t = await newTicket(admin);
    const before = await auditsOf(admin, t.id);

    expect((await admin.put(`${TICKETS}/${t.id}`, { ticket: { assigneeId: 'usr_nobody' } })).status).toBe(422);
    expect((await admin.put(`${TICKETS}/${t.id}`, { ticket: { status: 'closed' } })).status).toBe(403);
    const refused = await client.request('POST', MESSAGES, { token: session, body: { ticket_id: t.id, type: 'note', content: 'x', attachments: [{ token: 'upl_forged' }] } });
    expect(refused.status).toBe(422);

    expect(await auditsOf(admin, t.id)).toEqual(before);
  });

  it('a transaction cancelled at commit (the ticket changed since it was read) leaves no audit', async () => {
    const t = await newTicket(admin);
    const { planTicketUpdate } = await import('#shared/tickets/service.ts');
    const { transactWrite } = await import('#shared/db/transact.ts');
    const principal = { accountId: acct.accountId, userId: acct.ownerId, role: 'owner' as const, plan: 'enterprise' as const, credential: 'api_key' as const };
    const plan = await planTicketUpdate(principal, t.id, { priority: 'urgent' });
    expect((await admin.put(`${TICKETS}/${t.id}`, { ticket: { subject: 'got there first' } })).status).toBe(200);

    await expect(transactWrite(plan.writes)).rejects.toThrow(/changed concurrently/);

    const audits = await auditsOf(admin, t.id);
    expect(audits).toHaveLength(2);
    expect(audits[1].changes).toEqual([{ field: 'subject', from: 'Printer on fire', to: 'got there first' }]);
  });

  it("a deleted ticket's audits stay readable by admins, ending with the delete; agents get 404", async () => {
    const t = await newTicket(admin);
    expect((await admin.del(`${TICKETS}/${t.id}`)).status).toBe(204);

    const audits = await auditsOf(admin, t.id);

    expect(audits).toHaveLength(2);
    expect(audits[1]).toMatchObject({ deleted: true, changes: [], via: 'api', actor: { type: 'user', id: acct.ownerId } });
    expect((await agent.get(`${TICKETS}/${t.id}/audits`)).status).toBe(404);
    expect((await admin.get(`${TICKETS}/tkt_01NEVEREXISTED0000000000000/audits`)).status).toBe(404);
  });

  it("records an automation's change with the automation as actor", async () => {
    const own = await account();
    const owner = as(client, own.ownerKey);
    const rule = await owner.post('/helpdesk/api/automations', {
      name: 'Urgent vip',
      rule: { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['vip'] }], actions: [{ field: 'priority', value: 'urgent' }] },
    });
    expect(rule.status, rule.text).toBe(201);

    const t = await newTicket(owner, { tags: ['vip'], priority: 'low' });
    await pipeline().drained();

    const audits = await eventuallyFound(
      async () => {
        const list = await auditsOf(owner, t.id);
        return list.length === 2 ? list : null;
      },
      15_000,
      "the automation's audit",
    );
    expect(audits[1]).toMatchObject({ via: 'automation', actor: { type: 'automation', id: rule.body.data.id }, changes: [{ field: 'priority', from: 'low', to: 'urgent' }] });
  });

  it("another account's ticket history and audit log are unreachable", async () => {
    const t = await newTicket(admin);
    const other = await createTestAccount();
    const stranger = as(client, other.ownerKey);

    expect((await stranger.get(`${TICKETS}/${t.id}/audits`)).status).toBe(404);
    const log = await stranger.get(`${AUDITS}?resource_type=ticket&resource_id=${t.id}`);
    expect(log.status).toBe(200);
    expect(log.body.audits).toEqual([]);
    const all = await stranger.get(`${AUDITS}?page_size=100`);
    expect(all.status, all.text).toBe(200);
    expect(JSON.stringify(all.body)).not.toContain(t.id);
  });
});

describe("the account's audit log", () => {
  it('lists every audit in commit order, filtered by resource, actor and time; admins only', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    const member = await own.addUser('member');
    const byAgent = as(client, member.key);
    const since = new Date().toISOString();
    const a = await newTicket(owner, { subject: 'one' });
    const b = await newTicket(byAgent, { subject: 'two' });
    expect((await byAgent.put(`${TICKETS}/${a.id}`, { ticket: { priority: 'high' } })).status).toBe(200);

    const all = (await owner.get(`${AUDITS}?resource_type=ticket&since=${encodeURIComponent(since)}`)).body.audits;
    expect(all.map((x: Json) => [x.resource.id, x.changes.length > 1 ? 'create' : 'update'])).toEqual([
      [a.id, 'create'],
      [b.id, 'create'],
      [a.id, 'update'],
    ]);
    const mineRes = await owner.get(`${AUDITS}?actor_id=${member.id}`);
    expect(mineRes.status, mineRes.text).toBe(200);
    const mine = mineRes.body.audits;
    expect(mine.map((x: Json) => x.resource.id)).toEqual([b.id, a.id]);
    const one = (await owner.get(`${AUDITS}?resource_type=ticket&resource_id=${a.id}`)).body.audits;
    expect(one).toHaveLength(2);
    const until = (await owner.get(`${AUDITS}?resource_type=ticket&until=${encodeURIComponent(all[0].createdAt)}`)).body.audits;
    expect(until.map((x: Json) => x.id)).toEqual([all[0].id]);
    // Pages of one follow links.next through the whole log, in order.
    const paged: string[] = [];
    let res = await owner.get(`${AUDITS}?resource_type=ticket&page_size=1`);
    for (;;) {
      paged.push(...res.body.audits.map((x: Json) => x.id));
      if (!res.body.links.next) break;
      res = await owner.get(res.body.links.next);
    }
    expect(paged).toEqual(all.map((x: Json) => x.id));

    expect((await byAgent.get(AUDITS)).status).toBe(403);
    const bad = await owner.get(`${AUDITS}?since=yesterday`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('BAD_REQUEST');
  });
});

// Side by side: each test has its own account, and most of each is the export's settle line (10 s) passing after its
// writes, which no request can hurry; together they wait for it once instead of four times.
describe.concurrent('incremental export', () => {
  it('pages every ticket once in updatedAt order, then resumes with changes and a tombstone', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    // Settled records: stored as the repository writes them, 1 minute back.
    const base = Date.now() - 60_000;
    const records = await Promise.all(Array.from({ length: 23 }, (_, i) => ticketRecord(own.accountId, new Date(base + i * 10), { subject: `bulk ${i}` })));
    await storeTickets(records);

    const first = await exportAll(owner, 'tickets', new Date(base).toISOString(), 5);

    expect(first.pages).toBeGreaterThanOrEqual(5);
    expect(first.items.map((i) => i.id)).toEqual(records.map((r) => r.id));
    expect(first.items[0]).toEqual({ id: records[0].id, updatedAt: records[0].updatedAt, deleted: false, object: (await owner.get(`${TICKETS}/${records[0].id}`)).body.ticket });

    expect((await owner.del(`${TICKETS}/${records[3].id}`)).status).toBe(204);
    const put = await owner.put(`${TICKETS}/${records[4].id}`, { ticket: { priority: 'urgent' } });
    expect(put.status).toBe(200);
    // The delete came first: both are settled once the update is.
    await settled(put.body.ticket.updatedAt);
    const later = await eventuallyFound(
      async () => {
        const r = await resume(owner, 'tickets', first.cursor);
        return r.items.length >= 2 ? r : null;
      },
      20_000,
      'the delete and the update to settle',
    );

    expect(later.items).toEqual([
      { id: records[3].id, updatedAt: expect.any(String), deleted: true },
      expect.objectContaining({ id: records[4].id, deleted: false, object: expect.objectContaining({ priority: 'urgent' }) }),
    ]);
    expect((await resume(owner, 'tickets', later.cursor)).items).toEqual([]);
  });

  it('exports contacts, organizations and users in the shape their GET answers', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    const start = new Date(Date.now() - 1000).toISOString();
    const org = (await owner.post('/helpdesk/api/organizations', { name: 'Acme', organizationalDomain: 'acme-export.example' })).body.data;
    const contact = (await owner.post('/helpdesk/api/contacts', { name: 'Ann', email: 'ann@acme-export.example' })).body.data;
    // The owner and the organization were written before the contact; a new contact's place in the export is its creation.
    await settled(contact.createdAt);

    const [orgs, contacts, users] = await eventuallyFound(
      async () => {
        const all = await Promise.all(['organizations', 'contacts', 'users'].map((k) => exportAll(owner, k, start)));
        return all.every((a) => a.items.length) ? all : null;
      },
      20_000,
      'the records to settle',
    );

    expect(orgs.items).toEqual([{ id: org.id, updatedAt: expect.any(String), deleted: false, object: (await owner.get(`/helpdesk/api/organizations/${org.id}`)).body.data }]);
    expect(contacts.items).toEqual([{ id: contact.id, updatedAt: expect.any(String), deleted: false, object: (await owner.get(`/helpdesk/api/contacts/${contact.id}`)).body.data }]);
    const me = (await owner.get(`/playbook/api/v1/users/${own.ownerId}`)).body;
    // A user's place in the export is its last change: updated_at, or its last login when later.
    const changedAt = me.last_login_at && me.last_login_at > me.updated_at ? me.last_login_at : me.updated_at;
    expect(users.items).toContainEqual({ id: own.ownerId, updatedAt: changedAt, deleted: false, object: me });
  });

  it('loses nothing written with a back-dated updatedAt while a reader pages', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    const start = new Date(Date.now() - 60_000).toISOString();
    const written: string[] = [];
    let lastStamp = '';
    const seen = new Set<string>();
    let cursor = (await exportAll(owner, 'tickets', start)).cursor;

    // A writer whose stamps run 5 s behind the reader's clock (skew, or a commit 5 s late), racing a reader that keeps resuming.
    const writer = (async () => {
      for (let i = 0; i < 30; i++) {
        const r = await ticketRecord(own.accountId, new Date(Date.now() - 5_000), { subject: `late ${i}` });
        await storeTickets([r]);
        written.push(r.id);
        lastStamp = r.updatedAt;
      }
    })();
    const reader = (async () => {
      const deadline = Date.now() + 25_000;
      while (Date.now() < deadline) {
        const page = await resume(owner, 'tickets', cursor);
        for (const i of page.items) seen.add(i.id);
        cursor = page.cursor;
        if (written.length === 30 && written.every((id) => seen.has(id))) return;
        // Every write is in: the reader resumes once more when the last one is settled, not on its way there.
        if (written.length === 30) await settled(lastStamp);
      }
    })();
    await Promise.all([writer, reader]);

    expect(written.filter((id) => !seen.has(id))).toEqual([]);
  });

  it('a change sent later than the stamp bound lands at the time it was sent, where a reader past its updatedAt still finds it', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    const { STAMP_MAX_AGE_MS } = await import('#shared/db/client.ts');
    // A reader that has already passed the moment the late change is stamped with.
    const stampedAt = new Date(Date.now() - STAMP_MAX_AGE_MS - 6_000);
    let cursor = (await exportAll(owner, 'tickets', new Date(stampedAt.getTime() - 60_000).toISOString())).cursor;
    const late = await ticketRecord(own.accountId, stampedAt);
    const sentAt = Date.now();

    await createTicketInStore(late);
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const { ddb, tableName } = await import('#shared/db/client.ts');
    const item = (await ddb.send(new GetCommand({ TableName: tableName(), Key: { pk: `A#${own.accountId}`, sk: `TICKET#${late.id}` } }))).Item!;
    const placedAt = Date.parse(String(item.gsi4sk).split('#')[0]);
    // The reader resumes while the change is on its way, and again once its place in the index is settled.
    cursor = (await resume(owner, 'tickets', cursor)).cursor;
    await settled(placedAt);

    const seen = await eventuallyFound(
      async () => {
        const page = await resume(owner, 'tickets', cursor);
        cursor = page.cursor;
        return page.items.find((i) => i.id === late.id) ?? null;
      },
      20_000,
      'the late change in the export',
    );
    expect(seen).toMatchObject({ id: late.id, updatedAt: late.updatedAt, deleted: false });
    expect(item.updatedAt).toBe(late.updatedAt);
    expect(placedAt).toBeGreaterThanOrEqual(sentAt);
  });

  it('refuses a first call without start_time, a tampered cursor, another account, and non-admins', async () => {
    const other = await createTestAccount();
    const first = await admin.get(`${EXPORTS}/tickets?start_time=${encodeURIComponent(new Date(Date.now() - 3_600_000).toISOString())}`);
    expect(first.status).toBe(200);

    const missing = await admin.get(`${EXPORTS}/tickets`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toContainEqual(expect.objectContaining({ field: 'start_time' }));
    expect((await admin.get(`${EXPORTS}/tickets?start_time=not-a-time`)).status).toBe(400);
    expect((await admin.get(`${EXPORTS}/tickets?cursor=${first.body.cursor}x`)).status).toBe(400);
    expect((await as(client, other.ownerKey).get(`${EXPORTS}/tickets?cursor=${encodeURIComponent(first.body.cursor)}`)).status).toBe(400);
    expect((await admin.get(`${EXPORTS}/contacts?cursor=${encodeURIComponent(first.body.cursor)}`)).status).toBe(400);
    expect((await agent.get(`${EXPORTS}/tickets?start_time=2020-01-01T00:00:00Z`)).status).toBe(403);
    const stranger = await exportAll(as(client, other.ownerKey), 'tickets', '2020-01-01T00:00:00Z');
    expect(stranger.items).toEqual([]);
  });
});
