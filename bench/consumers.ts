/**
 * `BENCH_ONLY=consumers npm run bench` (issue 30, part 2): each ticket-event
 * consumer's DynamoDB requests per event, invoked as Lambda would (one-record
 * SQS events carrying the bus envelope of the account's real outbox events;
 * no pipeline runs in this section, so the events wait in the outbox), beside
 * the same figures measured on main before the change. The functions' requests
 * are counted by the proxy they reach DynamoDB Local through.
 */
import type { DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import { sqsEvent, templateQueue } from './stack.ts';

type Call = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

export interface ConsumerBenchStack {
  lambda: LocalLambda;
  store: DynamoDbProxy;
  call: Call;
}

/** What the webhook targets: nothing is delivered in this section (only the fan-out runs), so nothing needs to listen. */
const WEBHOOK_URL = 'https://localhost:9/bench';

/** The queues of the consumers measured, by the name their rows print. */
const QUEUES = { sla: 'sla', automations: 'automations', 'webhook-fanout': 'webhook-fanout', 'view-counts': 'view-counts' } as const;
type Consumer = keyof typeof QUEUES;

/**
 * Requests per event before: main at 1c2d88b (issue 30's part 2) for the SLA, automations and fan-out consumers, main
 * at f2433e7 (issue 42, second round) for the view counts, measured with this section's scenarios by
 * test/e2e/consumer-cost.test.ts's counting: what this section compares each row with.
 */
const BEFORE: Record<string, Partial<Record<Consumer, number>>> = {
  'ticket.created, nothing configured': { sla: 4, automations: 1, 'webhook-fanout': 1, 'view-counts': 4 },
  'ticket.created, policy + automation + webhook': { sla: 4, automations: 3, 'webhook-fanout': 2, 'view-counts': 4 },
  'ticket.updated, policy + automation + webhook': { sla: 4, automations: 3, 'webhook-fanout': 2, 'view-counts': 4 },
  'batch of 10 ticket.created, one account': { sla: 4, automations: 3, 'view-counts': 4 },
  'ticket.created, one view': { 'view-counts': 4 },
};

const fmt = (n: number) => n.toFixed(1);

export async function benchConsumers(stack: ConsumerBenchStack): Promise<void> {
  const { lambda, store, call } = stack;
  const { ddb, tableName } = await import('#shared/db/client.ts');
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const queues = Object.fromEntries(Object.entries(QUEUES).map(([name, queue]) => [name, templateQueue(lambda, queue)])) as Record<Consumer, ReturnType<typeof templateQueue>>;
  await Promise.all(Object.values(queues).map((q) => q.fn.warm()));

  /** The account's outbox events of these tickets and this type, in the tickets' order. */
  const outboxEvents = async (accountId: string, ticketIds: string[], event: string) => {
    const out = await ddb.send(
      new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `A#${accountId}`, ':p': 'OUTBOX#' } }),
    );
    const details = (out.Items ?? []).map((i) => i.detail).filter((d) => d.event === event);
    return ticketIds.map((id) => details.find((d) => d.data.ticket.id === id));
  };
  /** Requests per event of one invocation of the consumer with these events as one batch. */
  const perEvent = async (consumer: Consumer, details: any[]) => {
    const q = queues[consumer];
    store.reset();
    const body = (d: any) => JSON.stringify({ version: '0', id: d.eventId, source: 'support-desk.tickets', 'detail-type': d.event, time: d.timestamp, detail: d });
    const res = await q.fn.invoke<{ batchItemFailures?: unknown[] } | undefined>(
      sqsEvent(
        details.map((d, i) => ({ MessageId: `${d.eventId}-${i}`, Body: body(d) })),
        q.arn,
      ),
    );
    if (res?.batchItemFailures?.length) throw new Error(`${consumer} failed an event: ${JSON.stringify(res)}`);
    const st = store.reset();
    return { requests: st.requests / details.length, byCommand: Object.fromEntries(Object.entries(st.byCommand).map(([k, v]) => [k, v / details.length])) };
  };

  const accounts = await import('#shared/accounts/service.ts');
  const createAccount = async (name: string) => {
    const a = await accounts.createAccount({ name, plan: 'enterprise', ownerEmail: `owner-${Date.now()}@${name.toLowerCase()}.consumers.bench` });
    return { accountId: a.accountId, apiKey: a.apiKey };
  };
  const quiet = await createAccount('Quiet');
  const busy = await createAccount('Busy');
  const viewing = await createAccount('Viewing');
  await call('POST', '/helpdesk/api/v1/views', { view: { title: 'Open', conditions: { all: [{ field: 'status', operator: 'is', value: 'open' }] } } }, viewing.apiKey);
  const minutes = { urgent: 60, high: 60, normal: 60, low: 60 };
  await call('POST', '/helpdesk/api/sla-policies', { name: 'All', timeMode: 'calendarHours', conditions: [], targets: { firstReply: minutes, nextReply: minutes, resolution: minutes } }, busy.apiKey);
  await call(
    'POST',
    '/helpdesk/api/automations',
    { name: 'Never', rule: { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['never'] }], actions: [{ field: 'priority', value: 'low' }] } },
    busy.apiKey,
  );
  await call('POST', '/helpdesk/api/v1/webhooks', { webhook: { name: 'bench', targetUrl: WEBHOOK_URL, events: ['ticket.created', 'ticket.updated'] } }, busy.apiKey);
  const create = async (apiKey: string, subject: string) => (await call('POST', '/helpdesk/api/v1/tickets', { ticket: { subject } }, apiKey)).ticket.id as string;

  const quietTicket = await create(quiet.apiKey, 'Quiet');
  const busyTicket = await create(busy.apiKey, 'Busy');
  const viewTicket = await create(viewing.apiKey, 'In a view');
  const burst: string[] = [];
  for (let i = 0; i < 10; i++) burst.push(await create(busy.apiKey, `Burst ${i}`));

  const scenarios: { name: string; consumers: Consumer[]; events: () => Promise<any[]> }[] = [
    { name: 'ticket.created, nothing configured', consumers: ['sla', 'automations', 'webhook-fanout', 'view-counts'], events: () => outboxEvents(quiet.accountId, [quietTicket], 'ticket.created') },
    {
      name: 'ticket.created, policy + automation + webhook',
      consumers: ['sla', 'automations', 'webhook-fanout', 'view-counts'],
      events: () => outboxEvents(busy.accountId, [busyTicket], 'ticket.created'),
    },
    {
      name: 'ticket.updated, policy + automation + webhook',
      consumers: ['sla', 'automations', 'webhook-fanout', 'view-counts'],
      // Changed after its ticket.created was handled (the row above), as the pipeline would see it.
      events: async () => {
        await call('PUT', `/helpdesk/api/v1/tickets/${busyTicket}`, { ticket: { priority: 'high' } }, busy.apiKey);
        return outboxEvents(busy.accountId, [busyTicket], 'ticket.updated');
      },
    },
    { name: 'batch of 10 ticket.created, one account', consumers: ['sla', 'automations', 'view-counts'], events: () => outboxEvents(busy.accountId, burst, 'ticket.created') },
    { name: 'ticket.created, one view', consumers: ['view-counts'], events: () => outboxEvents(viewing.accountId, [viewTicket], 'ticket.created') },
  ];

  console.log('\nConsumers: DynamoDB requests per ticket event (the deployed consumer invoked with the events as one SQS batch; before: main at 1c2d88b, view counts at f2433e7)\n');
  const rows = [['event', 'consumer', 'before', 'now', 'by command (now)']];
  for (const s of scenarios) {
    const events = await s.events();
    for (const consumer of s.consumers) {
      const now = await perEvent(consumer, events);
      const before = BEFORE[s.name]?.[consumer];
      const by = Object.entries(now.byCommand)
        .map(([k, v]) => `${k}×${fmt(v)}`)
        .join(' ');
      rows.push([s.name, consumer, before === undefined ? '-' : fmt(before), fmt(now.requests), by]);
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(`  ${r.map((c, i) => c.padEnd(widths[i])).join('  ')}`);
}
