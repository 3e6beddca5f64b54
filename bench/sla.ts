/**
 * SLA benchmark (`node --import tsx bench/sla.ts`, BENCH_SLA_TICKETS to resize):
 * recompute of N open tickets through the sla-recompute queue (wall time and
 * DynamoDB requests per ticket), and the state consumer's cost per event.
 * Runs on DynamoDB Local (in memory) and fauxqs, like the local stack.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { freePort } from '../local/ports.ts';
import { ensureTable, startDynamoDbLocal } from '../local/dynamodb-local.ts';
import { configureLocalEnv, LOCAL_TABLE } from '../local/stack.ts';

const TICKETS = Number(process.env.BENCH_SLA_TICKETS ?? 10_000);
const EVENTS = 300;

process.env.DDB_STATS = '1';
process.env.LOG_LEVEL = 'silent';
const dynamo = await startDynamoDbLocal(await freePort());
await ensureTable(dynamo.endpoint, LOCAL_TABLE);
const { startLocalSqs, localQueueUrl } = await import('../local/pipeline.ts');
const sqsLocal = await startLocalSqs(0);
configureLocalEnv({ dynamodbEndpoint: dynamo.endpoint, sessionSecret: 'bench-secret-bench-secret-bench-secret-0123456789', sqsEndpoint: sqsLocal.endpoint });

const { resetDdbStats } = await import('#shared/db/stats.ts');
const accounts = await import('#shared/accounts/service.ts');
const ticketsRepo = await import('#shared/tickets/repository.ts');
const sla = await import('#shared/sla/service.ts');
const { sqs } = await import('#shared/events/sqs.ts');
const { newId } = await import('#shared/ids.ts');
const { transactWrite } = await import('#shared/db/transact.ts');

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

const queueUrl = localQueueUrl(sqsLocal.endpoint, 'sla-recompute');

/** Drain the recompute queue with the consumer's own function, as Lambda would (batch size 1). */
async function recompute(label: string) {
  resetDdbStats();
  const started = performance.now();
  const accepted = await sla.requestRecompute(admin, queueUrl);
  let batches = 0;
  for (;;) {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 1, WaitTimeSeconds: 1 }));
    const m = out.Messages?.[0];
    if (!m) break;
    await sla.recomputeBatch(JSON.parse(m.Body!), queueUrl);
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: m.ReceiptHandle! }));
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
await perEvent('State consumer, ticket.updated (status change)', (i) => sla.onTicketChanged(acct.accountId, ids[i]));
await perEvent('State consumer, the same ticket event redelivered', (i) => sla.onTicketChanged(acct.accountId, ids[i]));
await perEvent('State consumer, message.created (response)', (i) => sla.onMessage(acct.accountId, { id: newId('msg'), ticketId: ids[i], type: 'response', createdAt: new Date().toISOString() }));
await perEvent('State consumer, message.created (note)', (i) => sla.onMessage(acct.accountId, { id: newId('msg'), ticketId: ids[i], type: 'note', createdAt: new Date().toISOString() }));

await sqsLocal.stop();
await dynamo.stop();
process.exit(0);
