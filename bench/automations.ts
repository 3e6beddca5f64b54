/**
 * Automations in `npm run bench`: DynamoDB requests per evaluated event (no
 * match, and match + apply), the pure engine's CPU time, and the hourly pass
 * per 1,000 open tickets. The deployed functions do the work, invoked as
 * Lambda would: the automations consumer with one-record SQS events carrying
 * the bus envelope, the hourly job with its scheduled event (it really queues
 * its batches in fauxqs), and the time-rule consumer with those messages. The
 * functions' DynamoDB requests are counted by the proxy they reach it through.
 */
import { ReceiveMessageCommand, type Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import type { Principal } from '#shared/auth/principal.ts';
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import { LOCAL_ACCOUNT, type LocalLambda } from '../local/lambda/index.ts';
import { LOCAL_REGION, sqsClient } from '../local/stack.ts';
import { sqsEvent, templateQueue } from './stack.ts';

type Call = (method: string, path: string, body?: unknown) => Promise<any>;

const fmt = (n: number, d = 1) => n.toFixed(d);

export interface AutomationBenchStack {
  lambda: LocalLambda;
  store: DynamoDbProxy;
  sqsEndpoint: string;
}

export async function benchAutomations(call: Call, principal: Principal, stack: AutomationBenchStack): Promise<void> {
  const { lambda, store } = stack;
  const resetDdbStats = () => store.reset();
  const { explainRule, firstMatch } = await import('#shared/automations/engine.ts');
  const { TICKET_EVENT_SOURCE } = await import('#shared/tickets/events.ts');
  const tickets = await import('#shared/tickets/service.ts');
  const { newId } = await import('#shared/ids.ts');
  const { SCHEDULES } = await import('#app/topology.ts');
  const accountId = principal.accountId;
  const automations = templateQueue(lambda, 'automations');
  const timeRules = templateQueue(lambda, 'automation-time-rules');
  const job = lambda.byEntry(SCHEDULES.find((s) => s.name === 'automation-time-rules')!.entry);
  // The functions start before anything is timed (cold starts are the bundles table's business).
  await Promise.all([automations.fn.warm(), timeRules.fn.warm(), job.warm()]);

  // 10 automations, each with 3 conditions; only the last matches tickets tagged `bench`.
  for (let i = 0; i < 9; i++) {
    await call('POST', '/helpdesk/api/automations', {
      name: `Never ${i}`,
      rule: {
        all: [
          { field: 'tags', op: 'containsoneormoreof', value: [`never${i}`] },
          { field: 'subject', op: 'contains', value: 'x' },
          { field: 'priority', op: 'notequal', value: 'low' },
        ],
        actions: [{ field: 'priority', value: 'low' }],
      },
    });
  }
  await call('POST', '/helpdesk/api/automations', {
    name: 'Escalate bench',
    rule: {
      all: [
        { field: 'tags', op: 'containsoneormoreof', value: ['bench'] },
        { field: 'status', op: 'notequal', value: 'pending' },
      ],
      actions: [
        { field: 'priority', value: 'urgent' },
        { field: 'addTags', value: ['escalated'] },
      ],
    },
  });

  const N = 100;
  /** A ticket.updated as the automations queue delivers it: the bus envelope in a one-record SQS event. */
  const event = (ticketId: string) => {
    const detail = { eventId: newId('evt'), accountId, event: 'ticket.updated' as const, timestamp: new Date().toISOString(), data: { ticket: { id: ticketId, updatedFields: {} } } };
    const envelope = { version: '0', id: detail.eventId, source: TICKET_EVENT_SOURCE, 'detail-type': detail.event, time: detail.timestamp, detail };
    return sqsEvent([{ MessageId: detail.eventId, Body: JSON.stringify(envelope) }], automations.arn);
  };
  const onTicketEvent = async (e: SQSEvent) => {
    const res = await automations.fn.invoke<{ batchItemFailures?: unknown[] } | undefined>(e);
    if (res?.batchItemFailures?.length) throw new Error(`the automations consumer failed the event: ${JSON.stringify(res)}`);
  };
  const plain = await tickets.createTicket(principal, { subject: 'No match', status: 'new', priority: 'normal', type: 'question', tags: [] });
  const matching: { id: string; tags: string[] }[] = [];
  for (let i = 0; i < N; i++) matching.push(await tickets.createTicket(principal, { subject: 'Match', status: 'new', priority: 'normal', type: 'question', tags: ['bench'] }));

  const measure = async (name: string, run: (i: number) => Promise<unknown>) => {
    resetDdbStats();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await run(i);
    const ms = (performance.now() - t0) / N;
    const st = resetDdbStats();
    const by = Object.entries(st.byCommand)
      .map(([k, v]) => `${k}×${fmt(v / N)}`)
      .join(' ');
    console.log(`  ${name.padEnd(42)} ${fmt(st.requests / N)} DDB req/event (${by}), ${fmt(ms, 2)} ms/event`);
  };
  console.log('\nAutomations (10 automations of 3 conditions; the deployed consumer invoked with one-record SQS events, DynamoDB Local):\n');
  await measure('event, no automation matches', () => onTicketEvent(event(plain.id)));
  await measure('event, the 10th matches and applies', (i) => onTicketEvent(event(matching[i].id)));
  await measure('event again, actions change nothing', (i) => onTicketEvent(event(matching[i].id)));

  // The pure engine: 100 automations of 10 conditions against one ticket.
  const rules = Array.from({ length: 100 }, (_, i) => ({
    id: `a${i}`,
    isActive: true,
    rule: {
      all: Array.from({ length: 10 }, (_, j) => ({
        field: j % 2 ? 'subject' : 'tags',
        op: (j % 2 ? 'contains' : 'containsoneormoreof') as never,
        value: (j % 2 ? `word${j}` : [`tag${i}`, 'other']) as never,
      })),
      actions: [{ field: 'priority', value: 'low' }],
    },
  }));
  const t = { ...matching[0], tags: Array.from({ length: 20 }, (_, i) => `t${i}`) };
  const now = new Date();
  const R = 2000;
  let t0 = performance.now();
  for (let i = 0; i < R; i++) firstMatch(rules, t, now);
  const firstMatchUs = ((performance.now() - t0) / R) * 1000;
  t0 = performance.now();
  for (let i = 0; i < R / 10; i++) for (const r of rules) explainRule(r.rule, t, now);
  const explainUs = ((performance.now() - t0) / (R / 10)) * 1000;
  console.log(`  engine CPU, 100 automations x 10 conditions: first match ${fmt(firstMatchUs, 0)} µs/event, full dry-run explanation ${fmt(explainUs, 0)} µs`);

  // Hourly pass: 1,000 open tickets, one time rule that matches none of them (the common hour).
  const OPEN = 1000;
  const have = N + 1;
  for (let i = have; i < OPEN; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, OPEN - i) }, () => tickets.createTicket(principal, { subject: 'Open', status: 'open', priority: 'normal', type: 'question', tags: [] })));
  }
  await call('POST', '/helpdesk/api/automations', {
    name: 'Stale',
    rule: {
      all: [
        { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 72 },
        { field: 'status', op: 'equals', value: 'pending' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    },
  });
  // The job and the consumer report consumed capacity (the proxy asks DynamoDB Local for it) while they are measured.
  store.consumedCapacity = true;
  resetDdbStats();
  let started = performance.now();
  const scheduled = {
    version: '0',
    id: newId('evt'),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: LOCAL_ACCOUNT,
    time: now.toISOString(),
    region: LOCAL_REGION,
    resources: [],
    detail: {},
  };
  const queued = await job.invoke<{ accounts: number; tickets: number; messages: number }>(scheduled);
  const jobMs = performance.now() - started;
  const jobStats = resetDdbStats();
  // What the job queued, handed to the consumer as its event-source mapping would (the mapping's batch size).
  const sqs = sqsClient(stack.sqsEndpoint);
  const received: Message[] = [];
  for (const until = Date.now() + 10_000; received.length < queued.messages && Date.now() < until;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: timeRules.url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
    received.push(...(out.Messages ?? []));
  }
  sqs.destroy();
  resetDdbStats();
  started = performance.now();
  for (let i = 0; i < received.length; i += timeRules.batchSize) {
    const res = await timeRules.fn.invoke<{ batchItemFailures?: unknown[] } | undefined>(sqsEvent(received.slice(i, i + timeRules.batchSize), timeRules.arn));
    if (res?.batchItemFailures?.length) throw new Error(`the time-rule consumer failed a batch: ${JSON.stringify(res)}`);
  }
  const consumerMs = performance.now() - started;
  const consumer = resetDdbStats();
  store.consumedCapacity = false;
  const per = 1000 / queued.tickets;
  const by = (s: typeof jobStats) =>
    Object.entries(s.byCommand)
      .map(([k, v]) => `${k}×${fmt(v * per)}`)
      .join(' ');
  console.log(
    `  hourly pass, per 1,000 open tickets (${queued.tickets} listed, ${received.length}/${queued.messages} messages consumed): job ${fmt(jobStats.requests * per)} DDB req (${by(jobStats)}) + ${fmt(queued.messages * per, 0)} SQS messages sent, ${fmt(jobMs * per, 0)} ms;`,
  );
  console.log(`    consumer ${fmt(consumer.requests * per)} DDB req (${by(consumer)}), ${fmt(consumer.capacityUnits * per)} capacity units, ${fmt(consumerMs * per, 0)} ms`);
}
