/**
 * `BENCH_ONLY=bill` (issue 30, part 5): what one million requests of each
 * endpoint, and one million ticket events through the pipeline, cost in AWS
 * at the public us-east-1 prices of bench/prices.ts.
 *
 * Counted on the local stack, per request or per ticket event:
 *
 *   - Lambda: invocations of each function and their duration (the handler's
 *     wall time in its worker, which is what Lambda bills, rounded up to the
 *     ms) at the memory size its template gives it, in GB-seconds;
 *   - DynamoDB: read and write request units, as the store reports them
 *     (ReturnConsumedCapacity, added by the counting proxy);
 *   - API Gateway: one REST request per call (the authorizer is a Lambda
 *     invocation when its cache misses; the gateway runs with the stages' 300 s cache);
 *   - EventBridge: the events the outbox publisher puts on the bus (one per
 *     stream record it is handed);
 *   - SQS: per message a queue delivers, its send (by EventBridge or by a
 *     function), and per batch a consumer takes, one receive and one delete
 *     (Lambda's event-source mapping deletes a batch in one call). The empty
 *     long polls of idle queues are a fixed monthly cost, not per request.
 *
 * The pipeline's figures are for ticket.created and ticket.updated events with
 * every consumer of the template behind them and a webhook on every ticket
 * event (so the fan-out and a delivery are in); the API calls that made the
 * events are the endpoints' bill, subtracted here.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import type { LocalFunction } from '../local/lambda/runtime.ts';
import { gatewayCaller } from './http.ts';
import { cost, PRICES, ZENDESK_PER_AGENT_MONTH } from './prices.ts';

interface Usage {
  invocations: number;
  gbSeconds: number;
  readUnits: number;
  writeUnits: number;
  apiRequests: number;
  events: number;
  sqsRequests: number;
  s3PutCopy: number;
  s3Get: number;
}
const zero = (): Usage => ({ invocations: 0, gbSeconds: 0, readUnits: 0, writeUnits: 0, apiRequests: 0, events: 0, sqsRequests: 0, s3PutCopy: 0, s3Get: 0 });

/** Dollars per line of the bill for a usage. */
export function priced(u: Usage) {
  return {
    lambda: cost(PRICES.lambdaGbSecondArm, u.gbSeconds) + cost(PRICES.lambdaRequests, u.invocations),
    dynamodb: cost(PRICES.dynamodbReadUnits, u.readUnits) + cost(PRICES.dynamodbWriteUnits, u.writeUnits),
    apiGateway: cost(PRICES.apiGatewayRest, u.apiRequests),
    eventBridge: cost(PRICES.eventBridgeEvents, u.events),
    sqs: cost(PRICES.sqsRequests, u.sqsRequests),
    s3: cost(PRICES.s3PutCopyPostList, u.s3PutCopy) + cost(PRICES.s3GetAndOther, u.s3Get),
  };
}

interface FunctionMeter {
  invocations: number;
  billedMs: number;
  /** Records of the events it was handed (stream records, SQS messages). */
  records: number;
}

/**
 * Every invocation of every function, timed and counted where the gateway,
 * pollers and schedules call it (LocalFunction.invoke), without changing it.
 */
function meterFunctions(lambda: LocalLambda) {
  const meters = new Map<string, FunctionMeter>();
  const fresh = () => {
    for (const def of lambda.deployment.functions.values()) meters.set(def.logicalId, { invocations: 0, billedMs: 0, records: 0 });
  };
  fresh();
  for (const def of lambda.deployment.functions.values()) {
    const fn = lambda.fn(def.logicalId) as LocalFunction & { invoke: LocalFunction['invoke'] };
    const invoke = fn.invoke.bind(fn);
    fn.invoke = (async (event: unknown) => {
      const t0 = performance.now();
      try {
        return await invoke(event);
      } finally {
        const m = meters.get(def.logicalId)!;
        m.invocations += 1;
        m.billedMs += Math.ceil(performance.now() - t0);
        const records = (event as { Records?: unknown[] } | undefined)?.Records;
        m.records += Array.isArray(records) ? records.length : 0;
      }
    }) as LocalFunction['invoke'];
  }
  return {
    /** What ran since the last take, by logical id; starts a new count. */
    take() {
      const out = new Map(meters);
      fresh();
      return out;
    },
  };
}

const fmt = (n: number, d = 2) => (Math.abs(n) < 0.005 && n !== 0 ? n.toExponential(1) : n.toFixed(d));
const table = (rows: string[][]) => {
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i])).join('  '));
};

export interface BillScenario {
  name: string;
  run: (call: (method: string, path: string, body?: unknown, token?: string) => Promise<any>) => Promise<unknown>;
}

export async function runBill(o: {
  lambda: LocalLambda;
  store: DynamoDbProxy;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  tableName: string;
  /** A gateway with the authorizer cache on (the stages' 300 s). */
  gatewayUrl: string;
  call: (method: string, path: string, body?: unknown, token?: string) => Promise<any>;
  scenarios: BillScenario[];
  createAccount: () => Promise<{ accountId: string; apiKey: string }>;
  iterations?: number;
}) {
  const N = o.iterations ?? 100;
  const meter = meterFunctions(o.lambda);
  const defs = o.lambda.deployment.functions;
  const gbSeconds = (m: Map<string, FunctionMeter>, only: (id: string) => boolean) =>
    [...m].filter(([id]) => only(id)).reduce((s, [id, x]) => s + (x.billedMs / 1000) * (defs.get(id)!.memoryMb / 1024), 0);
  const invocations = (m: Map<string, FunctionMeter>, only: (id: string) => boolean) => [...m].filter(([id]) => only(id)).reduce((s, [, x]) => s + x.invocations, 0);
  const everyFn = () => true;
  const wasCapacity = o.store.consumedCapacity;
  o.store.consumedCapacity = true;

  // --- Endpoints: N calls each, sequential (one sandbox per call, as in Lambda), after 10 to warm up.
  const perRequest = new Map<string, Usage>();
  for (const s of o.scenarios) {
    for (let i = 0; i < 10; i++) await s.run(o.call);
    meter.take();
    o.store.reset();
    for (let i = 0; i < N; i++) await s.run(o.call);
    const m = meter.take();
    const st = o.store.reset();
    perRequest.set(s.name, {
      ...zero(),
      invocations: invocations(m, everyFn) / N,
      gbSeconds: gbSeconds(m, everyFn) / N,
      readUnits: st.readUnits / N,
      writeUnits: st.writeUnits / N,
      apiRequests: 1,
    });
  }

  // --- The pipeline: creates and updates of tickets in an account with a webhook on every ticket event.
  const { startPipeline } = await import('../local/pipeline.ts');
  const { startReceiver } = await import('../test/fixtures/webhook-receiver.ts');
  const pipeline = await startPipeline({
    lambda: o.lambda,
    dynamodbEndpoint: o.dynamodbEndpoint,
    sqsEndpoint: o.sqsEndpoint,
    tableName: o.tableName,
    pollIntervalMs: 50,
    sweepOnStart: false,
    schedules: false,
  });
  const receiver = await startReceiver();
  const a = await o.createAccount();
  const call = gatewayCaller(o.gatewayUrl);
  await call(a.apiKey, 'POST', '/helpdesk/api/v1/webhooks', {
    webhook: { name: 'bill', targetUrl: receiver.url(`/${a.accountId}`), events: ['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.assignment.changed', 'ticket.resolved'] },
  });
  const created: string[] = [];
  const createOne = async (i: number) =>
    created.push((await call(a.apiKey, 'POST', '/helpdesk/api/v1/tickets', { ticket: { subject: `Bill ${i}`, requesterEmail: `customer${i % 10}@bill.example` } })).ticket.id);
  for (let i = 0; i < 10; i++) await createOne(i);
  await pipeline.drained();
  created.length = 0;
  meter.take();
  o.store.reset();
  for (let i = 0; i < N; i++) await createOne(i);
  for (const [i, id] of created.entries()) await call(a.apiKey, 'PUT', `/helpdesk/api/v1/tickets/${id}`, { ticket: { priority: i % 2 ? 'high' : 'low' } });
  await pipeline.drained();
  const m = meter.take();
  const st = o.store.reset();
  await pipeline.stop();
  await receiver.close();
  o.store.consumedCapacity = wasCapacity;

  const streamFn = new Set(o.lambda.deployment.streamMappings.map((x) => x.functionId));
  const queueFns = new Set(o.lambda.deployment.sqsMappings.map((x) => x.functionId));
  const inPipeline = (id: string) => streamFn.has(id) || queueFns.has(id);
  const ticketEvents = [...streamFn].reduce((s, id) => s + m.get(id)!.records, 0);
  const messages = [...queueFns].reduce((s, id) => s + m.get(id)!.records, 0);
  const batches = [...queueFns].reduce((s, id) => s + m.get(id)!.invocations, 0);
  // The API calls' own store work (measured above for the same calls) is the endpoints' bill.
  const create = perRequest.get('POST /v1/tickets (known requester)') ?? perRequest.get('POST /v1/tickets (no requester)');
  const update = perRequest.get('PUT /v1/tickets/{id}');
  const apiRead = N * ((create?.readUnits ?? 0) + (update?.readUnits ?? 0));
  const apiWrite = N * ((create?.writeUnits ?? 0) + (update?.writeUnits ?? 0));
  const perEvent: Usage = {
    ...zero(),
    invocations: invocations(m, inPipeline) / ticketEvents,
    gbSeconds: gbSeconds(m, inPipeline) / ticketEvents,
    readUnits: Math.max(0, st.readUnits - apiRead) / ticketEvents,
    writeUnits: Math.max(0, st.writeUnits - apiWrite) / ticketEvents,
    events: 1,
    sqsRequests: (messages + 2 * batches) / ticketEvents,
  };

  // --- The bill.
  const MILLION = 1_000_000;
  console.log(
    `\nThe bill (issue 30): one million of each, in US dollars at the us-east-1 prices of bench/prices.ts (read ${PRICES.lambdaGbSecondArm.read}); ${N} measured calls each, authorizer cache on (300 s):\n`,
  );
  const rows = [['what', 'Lambda inv.', 'GB-s', 'RRU', 'WRU', 'Lambda $', 'DynamoDB $', 'API GW $', 'EventBridge $', 'SQS $', 'total $', 'largest']];
  const line = (name: string, u: Usage) => {
    const p = priced(u);
    const total = Object.values(p).reduce((a, b) => a + b, 0) * MILLION;
    const [top, topUsd] = Object.entries(p).sort((x, y) => y[1] - x[1])[0];
    rows.push([
      name,
      fmt(u.invocations, 2),
      fmt(u.gbSeconds * MILLION, 0),
      fmt(u.readUnits * MILLION, 0),
      fmt(u.writeUnits * MILLION, 0),
      fmt(p.lambda * MILLION),
      fmt(p.dynamodb * MILLION),
      fmt(p.apiGateway * MILLION),
      fmt(p.eventBridge * MILLION),
      fmt(p.sqs * MILLION),
      fmt(total),
      `${top} ${fmt((topUsd * MILLION * 100) / total, 0)}%`,
    ]);
  };
  for (const [name, u] of perRequest) line(name, u);
  line(`ticket event through the pipeline (${ticketEvents} events: ${fmt(messages / ticketEvents, 1)} SQS messages, ${fmt(batches / ticketEvents, 2)} batches each)`, perEvent);
  table(rows);
  console.log('\n"Lambda inv.": invocations per request or event; GB-s, RRU and WRU per million. Per-function GB-s of the pipeline, per million ticket events:');
  console.log(
    [...m]
      .filter(([id, x]) => inPipeline(id) && x.invocations)
      .map(
        ([id, x]) =>
          `${defs.get(id)!.name} ${fmt(((x.billedMs / 1000) * (defs.get(id)!.memoryMb / 1024) * MILLION) / ticketEvents, 0)} (${fmt((x.invocations * 100) / ticketEvents, 0)} inv./100 events)`,
      )
      .join('; '),
  );
  console.log(`For scale: Zendesk Suite Team $${ZENDESK_PER_AGENT_MONTH.suiteTeam.usd}, Suite Professional $${ZENDESK_PER_AGENT_MONTH.suiteProfessional.usd} per agent and month (billed annually).`);
  return { perRequest, perEvent };
}
