/**
 * Issue 39's figures for views (decisions §21): a view's count read and its
 * first page at 200 and at 20,000 tickets in the account (the tickets seeded
 * straight into the table, a new view counted by the background count), the
 * count read's DynamoDB requests (one, besides the rate limit's), and the time
 * from a ticket change to a fresh count under a burst of changes, with the
 * view-counts consumers fed by the local queue poller.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import { recordSeeder } from './growth.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

const RUNS = 9;
const BURST = 200;
const BURST_CONCURRENCY = 20;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const VIEWS = '/helpdesk/api/v1/views';

export async function runViewsBench(opts: { call: Call; store: DynamoDbProxy; lambda: LocalLambda; dynamodbEndpoint: string; sqsEndpoint: string }) {
  const { startPipeline } = await import('../local/pipeline.ts');
  const { LOCAL_TABLE } = await import('../local/stack.ts');
  const accounts = await import('#shared/accounts/service.ts');
  const acct = await accounts.createAccount({ name: 'Views', plan: 'enterprise', ownerEmail: 'owner@views.example' });
  const call: Call = (method, path, body) => opts.call(method, path, body, acct.apiKey);
  const seed = await recordSeeder(acct.accountId);
  /** `n` more tickets: one in 4 urgent, statuses in turn (a quarter of them match the views below). */
  let made = 0;
  const grow = async (n: number) => {
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < n; i++, made++) items.push(...seed.ticket(seed.at(), { status: ['new', 'open', 'pending', 'resolved'][made % 4], priority: made % 4 === 1 ? 'urgent' : 'normal' }));
    await seed.putAll(items);
  };
  const pipeline = await startPipeline({
    lambda: opts.lambda,
    dynamodbEndpoint: opts.dynamodbEndpoint,
    sqsEndpoint: opts.sqsEndpoint,
    tableName: LOCAL_TABLE,
    queues: ['view-counts', 'view-recount'],
    pollIntervalMs: 50,
    sweepOnStart: false,
    schedules: false,
  });
  // The view-count queues may still hold the earlier sections' events (erasure's 2,000 tickets, merge): worked off
  // first. In the full run of 05:42 UTC the seeding below, beside that work, timed out three times and ended the run.
  await pipeline.drained();
  const conditions = { all: [{ field: 'status', operator: 'in', value: ['new', 'open'] }], any: [{ field: 'priority', operator: 'is', value: 'urgent' }] };
  /** A new view, and the wall time of its background count (until its count is fresh). */
  const countedView = async (title: string) => {
    const t0 = performance.now();
    const { view } = await call('POST', VIEWS, { view: { title, conditions, sort: { by: 'createdAt', order: 'desc' } } });
    for (;;) {
      const { count } = await call('GET', `${VIEWS}/${view.id}/count`);
      if (count.fresh) return { id: view.id as string, value: count.value as number, ms: performance.now() - t0 };
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const measure = async (path: string) => {
    const times: number[] = [];
    let work = { requests: 0, itemsRead: 0, byCommand: {} as Record<string, number> };
    for (let r = 0; r < RUNS; r++) {
      opts.store.reset();
      const t = performance.now();
      await call('GET', path);
      times.push(performance.now() - t);
      work = opts.store.reset();
    }
    return { ms: median(times), requests: work.requests, items: work.itemsRead, commands: Object.keys(work.byCommand).sort().join(' ') };
  };
  const before = opts.store.consumedCapacity;
  opts.store.consumedCapacity = true;
  try {
    const rows: string[][] = [['tickets', 'count read: ms / requests / items read', 'first page of 25: ms / requests / items read', 'view counted in (background)', 'count']];
    let last = { id: '', value: 0, ms: 0 };
    for (const total of [200, 20_000]) {
      console.log(`views bench: seeding to ${total.toLocaleString('en')} tickets, then a view counted in the background`);
      await grow(total - made);
      const view = (last = await countedView(`Urgent ${total}`));
      const count = await measure(`${VIEWS}/${view.id}/count`);
      const page = await measure(`${VIEWS}/${view.id}/tickets?page_size=25`);
      rows.push([
        total.toLocaleString('en'),
        `${count.ms.toFixed(1)} / ${count.requests} (${count.commands}) / ${count.items}`,
        `${page.ms.toFixed(1)} / ${page.requests} / ${page.items}`,
        `${(view.ms / 1000).toFixed(1)} s`,
        String(view.value),
      ]);
    }
    // A burst of changes on the last view (counted already): each ticket created (matching: new and urgent) at
    // BURST_CONCURRENCY at once; the count polled meanwhile.
    console.log(`views bench: a burst of ${BURST} creates`);
    const view = last;
    const done: number[] = [];
    const fresh: number[] = [];
    opts.store.reset();
    let stop = false;
    let reads = 0;
    const poller = (async () => {
      for (; !stop; reads++) {
        const { count } = await call('GET', `${VIEWS}/${view.id}/count`);
        if (count.fresh) fresh.push(performance.now());
      }
    })();
    let next = 0;
    await Promise.all(
      Array.from({ length: BURST_CONCURRENCY }, async () => {
        while (next++ < BURST) {
          await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: 'Burst', priority: 'urgent' } });
          done.push(performance.now());
        }
      }),
    );
    for (;;) {
      const { count } = await call('GET', `${VIEWS}/${view.id}/count`);
      if (count.fresh && count.value === view.value + BURST) break;
    }
    const end = performance.now();
    stop = true;
    await poller;
    // A count read tries TransactGetItems again while a commit holds one of its items, and after 4 tries answers from a
    // BatchGetItem (fresh: false); the burst's other requests use neither.
    const { byCommand } = opts.store.reset();
    const freshReads = fresh.length;
    fresh.push(end);
    // Each change: from its 200 to the first fresh count read after it.
    const lag = done.map((t) => fresh.find((f) => f >= t)! - t);
    console.log(`\nViews (issue 39): a view's count and first page as the account grows (tickets seeded into the table; median of ${RUNS} calls, the work of one call)\n`);
    const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
    for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
    console.log('(requests include the rate-limit count of the request; the count read is one TransactGetItems: the view and the 8 change-tally items, at one instant)');
    console.log(
      `\nTime from a ticket change to a fresh count, ${BURST} creates ${BURST_CONCURRENCY} at a time (${((end - done[0]) / 1000).toFixed(1)} s in all): p50 ${pct(lag, 50).toFixed(0)} ms, p99 ${pct(lag, 99).toFixed(0)} ms, max ${Math.max(...lag).toFixed(0)} ms; the count read ${reads} times meanwhile, ${freshReads} of them fresh (fresh is the account's: every change applied); TransactGetItems ${byCommand.TransactGetItems ?? 0}, BatchGetItem ${byCommand.BatchGetItem ?? 0}`,
    );
  } finally {
    opts.store.consumedCapacity = before;
    await pipeline.stop();
  }
}
