/**
 * SLA benchmark (`node --import tsx bench/sla.ts`, BENCH_SLA_TICKETS to resize):
 * recompute of N open tickets through the sla-recompute queue (wall time and
 * DynamoDB requests per ticket), and the state consumer's cost per event.
 * Runs the stack `npm start` runs (bench/stack.ts): the recompute is asked of
 * the API, its queue is drained into the deployed recompute function as its
 * event-source mapping would (batch size 1), and the deployed state consumer
 * gets one-record SQS events. The functions' DynamoDB requests and consumed
 * capacity are counted by the proxy they reach DynamoDB Local through; the
 * seeding goes straight to it.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../local/stack.ts';
import { gatewayCaller } from './http.ts';
import { sqsEvent, startBenchStack, templateQueue } from './stack.ts';

const TICKETS = Number(process.env.BENCH_SLA_TICKETS ?? 10_000);
const EVENTS = 300;

const stack = await startBenchStack();
const { lambda, store } = stack;
store.consumedCapacity = true;
const resetDdbStats = () => store.reset();
const gw = await stack.gateway();

const accounts = await import('#shared/accounts/service.ts');
const ticketsRepo = await import('#shared/tickets/repository.ts');
const sla = await import('#shared/sla/service.ts');
const { newId } = await import('#shared/ids.ts');
const { transactWrite } = await import('#shared/db/transact.ts');
const { TICKET_EVENT_SOURCE } = await import('#shared/tickets/events.ts');
const { MESSAGE_CREATED, MESSAGE_EVENT_SOURCE } = await import('#shared/messages/events.ts');

const acct = await accounts.createAccount({ name: 'SLA bench', plan: 'enterprise', ownerEmail: 'owner@sla-bench.example' });
const admin = { accountId: acct.accountId, userId: acct.owner.id, role: 'owner' as const, plan: 'enterprise' as const, credential: 'api_key' as const };
const minutes = (n: number) => ({ urgent: n, high: n * 2, normal: n * 4, low: n * 8 });
const targets = { firstReply: minutes(30), nextReply: minutes(60), resolution: minutes(480) };
await sla.createPolicy(admin, { name: 'VIP', isActive: true, timeMode: 'businessHours', conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }], targets });
await sla.createPolicy(admin, { name: 'Urgent', isActive: true, timeMode: 'calendarHours', conditions: [{ field: 'priority', operator: 'is', value: 'urgent' }], targets });
await sla.createPolicy(admin, { name: 'Everyone', isActive: true, timeMode: 'calendarHours', conditions: [], targets });

// Seed open tickets straight through the repository (the bench measures SLA work, not ticket creation).
const seedStart = performance.now();
const ids: string[] = [];
const statuses = ['new', 'open', 'pending'] as const;
const priorities = ['low', 'normal', 'high', 'urgent'] as const;
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    for (let i = next++; i < TICKETS; i = next++) {
      const at = new Date().toISOString();
      const id = newId('tkt');
      ids.push(id);
      await ticketsRepo.createTicket(
        {
          id,
          accountId: acct.accountId,
          subject: `Seed ${i}`,
          status: statuses[i % 3],
          priority: priorities[i % 4],
          type: 'question',
          assigneeId: null,
          requesterEmail: null,
          requesterName: null,
          groupId: null,
          tags: i % 5 ? [] : ['vip'],
          customFields: [],
          mergedInto: null,
          satisfactionRating: null,
          createdAt: at,
          updatedAt: at,
          version: 1,
        },
        [],
      );
    }
  }),
);
console.log(`Seeded ${TICKETS} open tickets in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const recomputeQueue = templateQueue(lambda, 'sla-recompute');
const stateQueue = templateQueue(lambda, 'sla');
const sqs = sqsClient(stack.sqs.endpoint);
const call = gatewayCaller(gw.url);
// The functions start before anything is timed (cold starts are the bundles table's business).
await Promise.all([recomputeQueue.fn.warm(), stateQueue.fn.warm(), call(acct.apiKey, 'GET', '/helpdesk/api/sla-policies')]);

/** Ask the API for a recompute, then drain the recompute queue into the deployed consumer, as its mapping would (batch size 1). */
async function recompute(label: string) {
  resetDdbStats();
  const started = performance.now();
  const accepted = (await call(acct.apiKey, 'POST', '/helpdesk/api/sla-policies/recompute')).data as { ticketCount: number };
  let batches = 0;
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: recomputeQueue.url, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
    const m = out.Messages?.[0];
    if (!m) break;
    const res = await recomputeQueue.fn.invoke<{ batchItemFailures?: unknown[] }>(sqsEvent([m], recomputeQueue.arn));
    if (res?.batchItemFailures?.length) throw new Error(`the recompute consumer failed a batch: ${JSON.stringify(res)}`);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: recomputeQueue.url, ReceiptHandle: m.ReceiptHandle! }));
    batches += 1;
  }
  const wall = (performance.now() - started) / 1000;
  const stats = resetDdbStats();
  console.log(
    `${label}: ${accepted.ticketCount} tickets in ${batches} batches, ${wall.toFixed(1)} s wall (${(accepted.ticketCount / wall) | 0} tickets/s); ` +
      `DynamoDB ${(stats.requests / accepted.ticketCount).toFixed(2)} req/ticket ${JSON.stringify(stats.byCommand)}, ${(stats.capacityUnits / accepted.ticketCount).toFixed(2)} capacity units/ticket`,
  );
}

await recompute('Recompute, first run (no state yet)');
await recompute('Recompute, again (state exists, nothing changed)');

/** An event as the SLA queue delivers it to the deployed state consumer: the bus envelope in a one-record SQS event. */
const busEvent = (source: string, event: string, data: Record<string, unknown>) => {
  const detail = { eventId: newId('evt'), accountId: acct.accountId, event, timestamp: new Date().toISOString(), data };
  return sqsEvent([{ MessageId: detail.eventId, Body: JSON.stringify({ version: '0', id: detail.eventId, source, 'detail-type': event, time: detail.timestamp, detail }) }], stateQueue.arn);
};
const consume = async (event: ReturnType<typeof busEvent>) => {
  const res = await stateQueue.fn.invoke<{ batchItemFailures?: unknown[] }>(event);
  if (res?.batchItemFailures?.length) throw new Error(`the SLA state consumer failed an event: ${JSON.stringify(res)}`);
};

async function perEvent(label: string, run: (i: number) => Promise<void>) {
  resetDdbStats();
  const started = performance.now();
  for (let i = 0; i < EVENTS; i++) await run(i);
  const ms = (performance.now() - started) / EVENTS;
  const stats = resetDdbStats();
  console.log(
    `${label}: ${(stats.requests / EVENTS).toFixed(2)} DynamoDB req/event ${JSON.stringify(stats.byCommand)}, ${(stats.capacityUnits / EVENTS).toFixed(2)} capacity units/event, ${ms.toFixed(1)} ms/event`,
  );
}

// Consumer cost: a ticket event that moves the ticket (pending -> open or the reverse), a message, and a redelivery.
for (let i = 0; i < EVENTS; i++) {
  const t = (await ticketsRepo.getTicket(acct.accountId, ids[i]))!;
  await transactWrite([ticketsRepo.replaceTicketWrite({ ...t, status: t.status === 'pending' ? 'open' : 'pending', updatedAt: new Date().toISOString(), version: t.version + 1 }, t.version)]);
}
const updated = ids.slice(0, EVENTS).map((id) => busEvent(TICKET_EVENT_SOURCE, 'ticket.updated', { ticket: { id } }));
await perEvent('State consumer, ticket.updated (status change)', (i) => consume(updated[i]));
await perEvent('State consumer, the same ticket event redelivered', (i) => consume(updated[i]));
const message = (i: number, type: string) => busEvent(MESSAGE_EVENT_SOURCE, MESSAGE_CREATED, { message: { id: newId('msg'), ticketId: ids[i], type, createdAt: new Date().toISOString() } });
await perEvent('State consumer, message.created (response)', (i) => consume(message(i, 'response')));
await perEvent('State consumer, message.created (note)', (i) => consume(message(i, 'note')));

sqs.destroy();
await stack.stop();
process.exit(0);
