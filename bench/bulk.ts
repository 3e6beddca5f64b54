/**
 * Issue 28's figure for bulk actions (decisions §16): the wall time of a
 * 100-ticket bulk update, from the POST to the job completed, with the stack
 * `npm start` runs (the jobs API function and the bulk-jobs consumer from
 * their bundles, the consumer fed by the local queue poller as its
 * event-source mapping would feed it: a step of 25 tickets per message, each
 * step queueing the next). The job is polled in this process, straight from
 * the table, so the polls cost the functions nothing; their DynamoDB requests
 * are counted by the store proxy, per ticket.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import type { QueueName } from '#app/topology.ts';

/** bench/http.ts's caller: the answer's JSON body; an error answer throws. */
type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

const TICKETS = 100;
const RUNS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number, d = 1) => n.toFixed(d);

export async function runBulkBench(opts: {
  call: Call;
  store: DynamoDbProxy;
  lambda: LocalLambda;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  tableName: string;
  createAccount: () => Promise<{ accountId: string; apiKey: string }>;
}) {
  const { startPipeline } = await import('../local/pipeline.ts');
  const jobs = await import('#shared/jobs/service.ts');
  const { BULK_CHUNK } = jobs;
  const acct = await opts.createAccount();
  const call: Call = (method, path, body) => opts.call(method, path, body, acct.apiKey);
  const ids: string[] = [];
  for (let i = 0; i < TICKETS; i++) ids.push((await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Bulk ${i}`, tags: ['bench'] } })).ticket.id);

  const queues: QueueName[] = ['bulk-jobs'];
  const pipeline = await startPipeline({
    lambda: opts.lambda,
    dynamodbEndpoint: opts.dynamodbEndpoint,
    sqsEndpoint: opts.sqsEndpoint,
    tableName: opts.tableName,
    queues,
    pollIntervalMs: 50,
    sweepOnStart: false,
    schedules: false,
  });
  /** POST, then the job read every 10 ms until completed: wall ms, and what the functions asked of the store meanwhile. */
  const bulkUpdate = async (targets: string[], priority: string) => {
    opts.store.reset();
    const t0 = performance.now();
    const { job } = await call('POST', '/helpdesk/api/v1/tickets/bulk_update', { ids: targets, ticket: { priority } });
    for (;;) {
      const now = await jobs.getJob(acct, job.id);
      if (now.status === 'completed') {
        const ms = performance.now() - t0;
        if (now.succeeded !== targets.length) throw new Error(`bulk bench: ${now.failed} of ${targets.length} tickets failed: ${JSON.stringify(now.results.find((r) => r.error))}`);
        return { ms, store: opts.store.reset() };
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  try {
    // Warm: the jobs function, the consumer and the store's paths (cold starts are the bundles table's business).
    await bulkUpdate(ids.slice(0, 5), 'urgent');
    const runs: Awaited<ReturnType<typeof bulkUpdate>>[] = [];
    // Each run flips the priority, so every ticket really changes.
    for (let i = 0; i < RUNS; i++) runs.push(await bulkUpdate(ids, i % 2 ? 'low' : 'high'));

    const wall = median(runs.map((r) => r.ms));
    const requests = runs.reduce((n, r) => n + r.store.requests, 0) / RUNS / TICKETS;
    const byCommand: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(r.store.byCommand)) byCommand[k] = (byCommand[k] ?? 0) + v / RUNS / TICKETS;
    console.log(
      `\nBulk update of ${TICKETS} tickets (POST /v1/tickets/bulk_update -> job completed; ${Math.ceil(TICKETS / BULK_CHUNK)} steps of ${BULK_CHUNK} through the bulk-jobs queue, warm, median of ${RUNS}):\n`,
    );
    console.log(`  wall time: ${fmt(wall, 0)} ms (runs: ${runs.map((r) => fmt(r.ms, 0)).join(', ')}), ${fmt(wall / TICKETS)} ms per ticket`);
    console.log(
      `  DynamoDB requests per ticket (every function's: API, consumer, outbox publisher): ${fmt(requests)} (${Object.entries(byCommand)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}×${fmt(v, 2)}`)
        .join(' ')})`,
    );
  } finally {
    await pipeline.stop();
  }
}
