/**
 * The soak (issue 33, part 4): `BENCH_ONLY=soak npm run bench`, never part of
 * the default run nor of CI. Ten minutes (SOAK_MINUTES) of mixed traffic with
 * faults injected into the functions' AWS calls (FAULTS, default below), at
 * the rate the machine allows (SOAK_CONCURRENCY clients in a closed loop), on
 * the stack as bench/stack.ts runs it with the whole pipeline behind it. It
 * prints the requests, the answers by status (anything but the normal answer
 * or a 503 is a violation of decisions §19), the ticket events written beside
 * those delivered to a webhook, the dead-letter queues' entries, the faults
 * injected, and each function's heap at the start and at the end.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { dlqName, QUEUES } from '#app/topology.ts';
import { localQueueUrl } from '../local/lambda/index.ts';
import { LOCAL_TABLE, sqsClient } from '../local/stack.ts';
import { startBenchStack } from './stack.ts';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 8);
const DEFAULT_FAULTS = 'dynamodb:throttle:0.05,dynamodb:error:0.02,dynamodb:timeout:0.005,events:partial:0.05,sqs:error:0.02,s3:error:0.05';

const mb = (bytes: number | undefined) => (bytes === undefined ? '-' : (bytes / 1024 / 1024).toFixed(1));

export async function runSoak(): Promise<void> {
  // Set before the functions start: the local overlay hands FAULTS to each of them (this process stays honest).
  process.env.FAULTS ||= DEFAULT_FAULTS;
  const stack = await startBenchStack();
  const { lambda, sqs } = stack;
  const gw = await stack.gateway();
  const { startPipeline } = await import('../local/pipeline.ts');
  const pipeline = await startPipeline({ lambda, dynamodbEndpoint: stack.dynamo.endpoint, sqsEndpoint: sqs.endpoint, tableName: LOCAL_TABLE, schedules: false, idleWaitSeconds: 1 });
  const { startReceiver } = await import('../test/fixtures/webhook-receiver.ts');
  const receiver = await startReceiver();
  const accounts = await import('#shared/accounts/service.ts');
  const acct = await accounts.createAccount({ name: 'Soak', plan: 'enterprise', ownerEmail: 'owner@soak.example' });
  const session = (await accounts.issueSessionToken(acct.accountId, acct.owner.id, 3 * 60 * 60)).token;

  const statuses = new Map<string, number>();
  const violations: string[] = [];
  let requests = 0;
  /** One request: counted by status; a 503 needs Retry-After, anything else than `normal` and 503 is a violation. */
  const call = async (method: string, path: string, normal: number, body?: unknown, opts: { token?: string; key?: string } = {}) => {
    requests++;
    const res = await fetch(gw.url + path, {
      method,
      headers: { Authorization: `Bearer ${opts.token ?? acct.apiKey}`, 'Content-Type': 'application/json', ...(opts.key ? { 'Idempotency-Key': opts.key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    statuses.set(String(res.status), (statuses.get(String(res.status)) ?? 0) + 1);
    const ok = res.status === normal || (res.status === 503 && Number(res.headers.get('retry-after')) >= 1);
    if (!ok && violations.length < 20) violations.push(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };

  // A webhook on the events the traffic writes: what reaches it is what the bus delivered.
  const hook = (await call('POST', '/helpdesk/api/v1/webhooks', 201, { webhook: { name: 'soak', targetUrl: receiver.url('/soak'), events: ['ticket.created', 'ticket.updated'] } })).body.webhook;
  const endpoint = receiver.endpoint('/soak', hook.signingSecret);
  await call('POST', '/helpdesk/api/organizations', 201, { name: 'Soak Co', organizationalDomain: 'soak-co.example' });
  const tickets: string[] = [];
  let written = 0;
  let n = 0;
  const newTicket = async () => {
    const res = await call('POST', '/helpdesk/api/v1/tickets', 201, { ticket: { subject: `Soak ${n++}`, requesterEmail: `customer${n % 50}@soak-co.example` } }, { key: randomUUID() });
    if (res.status === 201) {
      tickets.push(res.body.ticket.id);
      written++;
    }
  };
  const someTicket = () => tickets[Math.floor(Math.random() * tickets.length)];
  /** The mix, by weight: mostly reads, a ticket write in four requests. */
  const MIX: Array<[number, () => Promise<unknown>]> = [
    [15, newTicket],
    [10, async () => (await call('PUT', `/helpdesk/api/v1/tickets/${someTicket()}`, 200, { ticket: { tags: [`soak-${n++}`] } })).status === 200 && written++],
    [25, () => call('GET', `/helpdesk/api/v1/tickets/${someTicket()}`, 200)],
    [10, () => call('GET', '/helpdesk/api/v1/tickets?page_size=25', 200)],
    [5, () => call('GET', '/helpdesk/api/v1/tickets?search=soak', 200)],
    [5, () => call('POST', '/helpdesk/api/contacts', 201, { name: 'Soak Person', email: `person-${randomUUID()}@soak-co.example` }, { key: randomUUID() })],
    [5, () => call('GET', '/helpdesk/api/contacts?limit=20', 200)],
    [5, () => call('POST', '/helpdesk/api/messages', 201, { ticket_id: someTicket(), type: 'note', content: 'soak note' }, { token: session, key: randomUUID() })],
    [5, () => call('GET', `/helpdesk/api/v1/tickets/${someTicket()}/audits`, 200)],
    [5, () => call('POST', '/helpdesk/api/uploads', 201, { name: 'soak.txt', size: 10, contentType: 'text/plain' })],
    [5, () => call('GET', '/helpdesk/api/v1/exports/tickets?start_time=2020-01-01T00:00:00Z', 200)],
    [5, () => call('GET', '/playbook/api/v1/users/me', 200)],
  ];
  const total = MIX.reduce((s, [w]) => s + w, 0);
  const pick = () => {
    let r = Math.random() * total;
    for (const [w, op] of MIX) if ((r -= w) < 0) return op;
    return MIX[0][1];
  };

  // Warm-up: every kind of request once, so each function's worker runs before its heap is first read.
  while (tickets.length < 5) await newTicket();
  for (const [, op] of MIX) await op();
  await pipeline.drained();
  const heapAt = async () => new Map(await Promise.all([...lambda.deployment.functions.values()].map(async (def) => [def.name, await lambda.fn(def.logicalId).heapUsed()] as const)));
  const heapStart = await heapAt();

  console.log(`Soak: ${MINUTES} min of mixed traffic, ${CONCURRENCY} clients, FAULTS=${process.env.FAULTS}`);
  const began = Date.now();
  const until = began + MINUTES * 60_000;
  let lastReport = began;
  // The heaps each minute: one that keeps growing after it has warmed up, not one that warms up, is a leak.
  const heapByMinute: Array<Map<string, number | undefined>> = [];
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await pick()();
        if (Date.now() - lastReport >= 60_000) {
          lastReport = Date.now();
          console.log(`  ${Math.round((lastReport - began) / 60_000)} min: ${requests} requests, ${[...statuses].map(([s, c]) => `${s}: ${c}`).join(', ')}`);
          heapByMinute.push(await heapAt());
        }
      }
    }),
  );
  const seconds = (Date.now() - began) / 1000;

  // Let the pipeline finish, the sweeper catch what the stream path dropped, then count.
  const delivered = () => new Set(endpoint.received.filter((r) => r.verified).map((r) => r.id)).size;
  for (const settleUntil = Date.now() + 180_000; Date.now() < settleUntil && delivered() < written; await sleep(500)) {
    await pipeline.drained({ delayed: true });
    await pipeline.sweep(0).catch(() => undefined);
  }
  const sqsc = sqsClient(sqs.endpoint);
  const dlq = await Promise.all(
    QUEUES.map(async (q) => {
      const out = await sqsc.send(new GetQueueAttributesCommand({ QueueUrl: localQueueUrl(sqs.endpoint, dlqName(q.name)), AttributeNames: ['ApproximateNumberOfMessages'] })).catch(() => undefined);
      return [q.name, Number(out?.Attributes?.ApproximateNumberOfMessages ?? 0)] as const;
    }),
  );
  // A moment idle, so the heaps are read after their own collections rather than mid-burst.
  await sleep(5_000);
  const heapEnd = await heapAt();

  console.log(`\nSoak results (${seconds.toFixed(0)} s):`);
  console.log(`  requests: ${requests} (${(requests / seconds).toFixed(1)}/s)`);
  console.log(
    `  answers by status: ${[...statuses]
      .sort()
      .map(([s, c]) => `${s}: ${c}`)
      .join(', ')}`,
  );
  console.log(`  violations (neither the normal answer nor a 503 with Retry-After): ${violations.length}${violations.length ? `\n    ${violations.join('\n    ')}` : ''}`);
  console.log(`  ticket events written (201 creates, 200 updates): ${written}; delivered to the webhook (distinct webhook-ids): ${delivered()}`);
  console.log(`  dead-letter queues: ${dlq.map(([q, c]) => `${q}: ${c}`).join(', ')}`);
  console.log(`  faults injected: ${JSON.stringify(lambda.injectedFaults())}`);
  console.log('  heap used per function after a full GC (MB): after warm-up, then each minute, then at the end');
  for (const [name, start] of heapStart) {
    if (start === undefined && heapEnd.get(name) === undefined) continue;
    const series = [start, ...heapByMinute.map((h) => h.get(name)), heapEnd.get(name)].map((b) => mb(b).padStart(5));
    console.log(`    ${name.padEnd(28)} ${series.join(' ')}`);
  }

  sqsc.destroy();
  await receiver.close();
  await pipeline.stop();
  await stack.stop();
}
