/**
 * The event pipeline's figures (issue 13), on the local stack:
 *
 *   - the raw rate of 2-item TransactWriteItems on the same DynamoDB Local
 *     (what a ticket create costs the store, with nothing behind it);
 *   - a burst of ticket creates (concurrency 8) against a webhook on every
 *     event: delivered events/s, its ratio to the raw rate, and
 *     write-to-delivery p50/p99;
 *   - a quiet account's write-to-delivery p50/p99 while another account
 *     creates tickets at concurrency 16.
 *
 * `runPipelineBench` is called by bench/run.ts with its stack (bench/stack.ts:
 * the deployed functions in their workers, their DynamoDB traffic counted by
 * the proxy); `node --import tsx bench/pipeline.ts` runs it alone (for
 * profiling: add --cpu-prof, which profiles this process: the gateway, the
 * pollers, the bus and the proxy, not the functions' workers).
 * `measureDelivery` (the burst and the quiet account) also runs from outside,
 * against the stack as `npm start` runs it in a process of its own
 * (bench/request-path.ts): issue 21's goals are about those figures.
 */
import { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import type { QueueName } from '#app/topology.ts';
import { gatewayCaller } from './http.ts';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};
const fmt = (n: number, d = 0) => n.toFixed(d);

/** Run `n` tasks with `concurrency` in flight. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await task(next++);
    }),
  );
}

export interface PipelineBenchOptions {
  /** The deployed functions the pipeline invokes (and the gateway runs). */
  lambda: LocalLambda;
  /** The proxy the functions reach DynamoDB through: their requests in the burst. */
  store: DynamoDbProxy;
  /** DynamoDB Local itself: the stream poller reads it as Lambda's event-source mapping would, uncounted. */
  dynamodbEndpoint: string;
  /** fauxqs with the template's queues (the functions' queue URLs point at it). */
  sqsEndpoint: string;
  /** Base URL of a running local gateway on the same store. */
  gatewayUrl: string;
  tableName: string;
  burst?: number;
  noisyBurst?: number;
}

/** Creates an enterprise account on the store the stack uses: its API key and id. */
export type AccountMaker = (name: string) => Promise<{ apiKey: string; accountId: string }>;

/** What measureDelivery saw; the p99s are what issue 21's goals are about. */
export interface DeliveryFigures {
  burst: number;
  writeRate: number;
  delivered: number;
  deliveredRate: number;
  burstP50: number;
  burstP99: number;
  noisy: number;
  quietCount: number;
  quietP50: number;
  quietP99: number;
  noisyDelivered: number;
  /** From the noisy account's last create answered to every consumer done (when measureDelivery was given `drained`). */
  catchUpMs?: number;
}

/**
 * Steps 2 and 3, on any stack whose gateway answers at `gatewayUrl` with its
 * pipeline running (this process's, or one in a process of its own):
 * write-to-delivery of a burst of creates at concurrency 8 with a webhook on
 * every event, then a quiet account's while a noisy one creates `noisy`
 * tickets at concurrency 16.
 */
export async function measureDelivery(opts: {
  gatewayUrl: string;
  createAccount: AccountMaker;
  burst: number;
  noisy: number;
  /** Called as the burst starts, and once all of it is delivered. */
  aroundBurst?: { before(): void; after(): void | Promise<void> };
  /** Resolves once every consumer has handled every event so far: timed after the noisy burst's last create. */
  drained?: () => Promise<void>;
}): Promise<DeliveryFigures> {
  const BURST = opts.burst;
  const NOISY = opts.noisy;
  const { startReceiver } = await import('../test/fixtures/webhook-receiver.ts');
  // Each tenant has its own receiver (its own host:port), as customers' endpoints are: the delivery agent's
  // per-host connection cap then applies per tenant, not to every tenant at once as one shared receiver would.
  const receivers: Awaited<ReturnType<typeof startReceiver>>[] = [];

  const call = gatewayCaller(opts.gatewayUrl);
  /** A fresh account with a webhook on every ticket event; delivery times by ticket id. */
  const tenant = async (name: string) => {
    const a = await opts.createAccount(name);
    const receiver = await startReceiver();
    receivers.push(receiver);
    const hook = await call(a.apiKey, 'POST', '/helpdesk/api/v1/webhooks', {
      webhook: { name, targetUrl: receiver.url(`/${a.accountId}`), events: ['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.assignment.changed', 'ticket.resolved'] },
    });
    const deliveredAt = new Map<string, number>();
    const endpoint = receiver.endpoint(`/${a.accountId}`, hook.webhook.signingSecret);
    const writtenAt = new Map<string, number>();
    let seen = 0;
    return {
      async create(subject: string) {
        const t0 = performance.now();
        const t = await call(a.apiKey, 'POST', '/helpdesk/api/v1/tickets', { ticket: { subject } });
        // Write time: when the API answered, i.e. the transaction with the outbox item committed.
        writtenAt.set(t.ticket.id, performance.now());
        return t0;
      },
      /** Collect verified deliveries of ticket.created seen so far. */
      collect() {
        // Only what arrived since the last look: this runs every 5 ms beside the pipeline it measures.
        for (const r of endpoint.received.slice(seen)) {
          seen += 1;
          if (!r.verified) continue;
          const id = JSON.parse(r.body).data.ticket.id as string;
          if (!deliveredAt.has(id)) deliveredAt.set(id, performance.now());
        }
      },
      lags: () => [...deliveredAt].filter(([id]) => writtenAt.has(id)).map(([id, at]) => at - writtenAt.get(id)!),
      deliveredAt,
      writtenAt,
    };
  };
  const waitFor = async (t: Awaited<ReturnType<typeof tenant>>, count: number, timeoutMs = 180_000) => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      t.collect();
      if (t.deliveredAt.size >= count) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  };

  // 2. Burst: creates at concurrency 8, a webhook on every event.
  const busy = await tenant('burst');
  opts.aroundBurst?.before();
  const burstStarted = performance.now();
  const watcher = setInterval(() => busy.collect(), 5);
  await pool(BURST, 8, async (i) => void (await busy.create(`Burst ${i}`)));
  const writesDone = performance.now();
  await waitFor(busy, BURST);
  clearInterval(watcher);
  const lastDelivery = Math.max(...busy.deliveredAt.values());
  const deliveredRate = busy.deliveredAt.size / ((lastDelivery - burstStarted) / 1000);
  const writeRate = BURST / ((writesDone - burstStarted) / 1000);
  const burstLags = busy.lags();
  await opts.aroundBurst?.after();

  // 3. Fairness: a quiet account writes one ticket every 100 ms while a noisy one bursts at concurrency 16.
  const noisy = await tenant('noisy');
  const quiet = await tenant('quiet');
  let noisyDone = false;
  let noisyWritten = 0;
  const noisyRun = pool(NOISY, 16, async (i) => void (await noisy.create(`Noisy ${i}`))).then(() => {
    noisyDone = true;
    noisyWritten = performance.now();
  });
  const quietWatcher = setInterval(() => quiet.collect(), 5);
  let quietCount = 0;
  while (!noisyDone) {
    await quiet.create(`Quiet ${quietCount++}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await noisyRun;
  await waitFor(quiet, quietCount);
  clearInterval(quietWatcher);
  const quietLags = quiet.lags();
  await waitFor(noisy, NOISY, 60_000);
  // Every consumer, not only the webhooks': what the functions served after the outward path (automations, SLA, views'
  // counts...) still had to do when the noisy account's last create was answered.
  const catchUpMs = opts.drained ? (await opts.drained(), performance.now() - noisyWritten) : undefined;

  await Promise.all(receivers.map((r) => r.close()));
  return {
    burst: BURST,
    writeRate,
    delivered: busy.deliveredAt.size,
    deliveredRate,
    burstP50: pct(burstLags, 50),
    burstP99: pct(burstLags, 99),
    noisy: NOISY,
    quietCount: quietLags.length,
    quietP50: pct(quietLags, 50),
    quietP99: pct(quietLags, 99),
    noisyDelivered: noisy.deliveredAt.size,
    catchUpMs,
  };
}

export async function runPipelineBench(opts: PipelineBenchOptions): Promise<DeliveryFigures> {
  const BURST = opts.burst ?? Number(process.env.BENCH_PIPELINE_BURST ?? 300);
  const NOISY = opts.noisyBurst ?? Number(process.env.BENCH_PIPELINE_NOISY ?? 600);
  const { startPipeline } = await import('../local/pipeline.ts');
  const accounts = await import('#shared/accounts/service.ts');
  const { ddb, tableName } = await import('#shared/db/client.ts');
  const call = gatewayCaller(opts.gatewayUrl);

  // 1. The store's own rate: 2-item transactions (a record and its outbox item), concurrency 8, on a warm JVM
  // (the first few hundred calls to a fresh DynamoDB Local run at half speed while it compiles; the burst never sees that).
  const rawTx = (prefix: string) => async (i: number) => {
    const pk = `BENCH#${prefix}#${i}`;
    await ddb.send(new TransactWriteCommand({ TransactItems: [{ Put: { TableName: tableName(), Item: { pk, sk: 'A', n: i } } }, { Put: { TableName: tableName(), Item: { pk, sk: 'B', n: i } } }] }));
  };
  await pool(1500, 8, rawTx('warm'));
  const RAW = 600;
  const rawStarted = performance.now();
  await pool(RAW, 8, rawTx('raw'));
  const rawRate = RAW / ((performance.now() - rawStarted) / 1000);

  // 1b. The API's own ceiling: the same burst of creates with no pipeline running (and no webhook), so nothing else
  // competes for the store and the CPU. Delivery can never exceed the rate at which the API writes.
  const alone = await accounts.createAccount({ name: 'alone', plan: 'enterprise', ownerEmail: `owner-${Date.now()}@alone.bench` });
  const aloneStarted = performance.now();
  await pool(BURST, 8, async (i) => void (await call(alone.apiKey, 'POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Alone ${i}` } })));
  const aloneRate = BURST / ((performance.now() - aloneStarted) / 1000);

  // The pipeline starts now: the stream is read from its tip, so the ceiling run's events are not part of the burst.
  // BENCH_PIPELINE_QUEUES=all: every queue of the template, as `npm start` runs it (the SLA, automations and view-count
  // consumers too, whose store work the burst's events then wait behind); by default only the webhooks' two.
  const all = process.env.BENCH_PIPELINE_QUEUES === 'all';
  const queues: QueueName[] = all ? [...opts.lambda.deployment.queues.values()].map((q) => q.name as QueueName) : ['webhook-fanout', 'webhook-delivery'];
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
  // Its functions start now (their cold starts are the bundles table's business, not the burst's).
  const d = opts.lambda.deployment;
  const consumers = d.sqsMappings.filter((m) => queues.includes(d.queues.get(m.queueId)!.name as QueueName)).map((m) => m.functionId);
  await Promise.all([...d.streamMappings.map((m) => m.functionId), ...consumers].map((id) => opts.lambda.fn(id).warm()));

  // 2 and 3: the burst and the quiet account beside the noisy one; every DynamoDB request of the functions in the burst
  // (authorizer, API, publisher, fan-out, delivery), per delivered event.
  let n = 0;
  let burstCalls: { requests: number; byCommand: Record<string, number> } = { requests: 0, byCommand: {} };
  const f = await measureDelivery({
    gatewayUrl: opts.gatewayUrl,
    createAccount: (name) => accounts.createAccount({ name, plan: 'enterprise', ownerEmail: `owner-${Date.now()}-${n++}@pipeline.bench` }),
    burst: BURST,
    noisy: NOISY,
    aroundBurst: {
      before: () => void opts.store.reset(),
      // With every consumer running, the ones that deliver nothing (SLA, automations, view counts) are still at work at the
      // last delivery: the burst's tally waits until the pipeline has drained, so it holds every consumer's requests.
      after: async () => {
        if (all) await pipeline.drained();
        burstCalls = opts.store.reset();
      },
    },
  });

  console.log(`\nEvent pipeline (local: stream poll 50 ms -> outbox publisher -> local bus -> fauxqs -> ${all ? 'every consumer' : 'fan-out'} -> signed HTTPS delivery)\n`);
  console.log(`  raw 2-item TransactWriteItems, concurrency 8:     ${fmt(rawRate, 1)} tx/s (warm store)`);
  console.log(`  API alone, ${BURST} creates at c8, no pipeline:      ${fmt(aloneRate, 1)}/s = ${fmt((aloneRate / rawRate) * 100)}% of raw (the ceiling for delivery)`);
  console.log(
    `  burst of ${BURST} creates, concurrency 8:            written at ${fmt(f.writeRate, 1)}/s; ${f.delivered} delivered, ${fmt(f.deliveredRate, 1)} events/s = ${fmt((f.deliveredRate / rawRate) * 100)}% of raw (goal >= 50%)`,
  );
  if (burstCalls.requests)
    console.log(
      `  DynamoDB requests per delivered event:           ${fmt(burstCalls.requests / f.delivered, 1)} (${Object.entries(burstCalls.byCommand)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${fmt(v / f.delivered, 2)}`)
        .join(', ')})`,
    );
  printDeliveryLags(f);
  await pipeline.stop();
  return f;
}

/** The latency lines of measureDelivery's figures. */
export function printDeliveryLags(f: DeliveryFigures) {
  console.log(`  burst write-to-delivery:                         p50 ${fmt(f.burstP50)} ms, p99 ${fmt(f.burstP99)} ms (goal <= 500 / 1500)`);
  console.log(
    `  quiet account during a ${f.noisy}-ticket burst (c16): ${f.quietCount} events, p50 ${fmt(f.quietP50)} ms, p99 ${fmt(f.quietP99)} ms (goal p99 <= 1000); noisy delivered ${f.noisyDelivered}/${f.noisy}`,
  );
}

if (process.argv[1]?.endsWith('bench/pipeline.ts')) {
  const { startBenchStack } = await import('./stack.ts');
  const { LOCAL_TABLE } = await import('../local/stack.ts');
  const stack = await startBenchStack();
  try {
    const gw = await stack.gateway();
    await runPipelineBench({ lambda: stack.lambda, store: stack.store, dynamodbEndpoint: stack.dynamo.endpoint, sqsEndpoint: stack.sqs.endpoint, gatewayUrl: gw.url, tableName: LOCAL_TABLE });
  } finally {
    await stack.stop();
  }
  process.exit(0);
}
