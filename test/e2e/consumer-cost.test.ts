import type { SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, outboxItems, TICKETS, type Json } from '../support/desk.ts';
import { localLambda } from '../support/lambda.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

// Each consumer's DynamoDB requests per event (issue 30, part 2), counted on the wire by the proxy its function reaches
// the store through. No pipeline runs in this file: an account's events stay in its outbox, and each consumer is
// invoked by hand with them, as its queue's event-source mapping would, one consumer at a time.
const store = useStoreProxy();
const { client } = useGateway();
const receiver = useReceiver();

const CONSUMERS = {
  sla: 'functions/sla-state/handler.ts',
  automations: 'functions/automations/consumer.ts',
  webhooks: 'functions/webhook-fanout/handler.ts',
  views: 'functions/view-counts/handler.ts',
} as const;

/** Lambda's SQS event for bus events (the envelope as an SQS target receives it), one record each. */
const sqsEvent = (details: Json[]): SQSEvent =>
  ({
    Records: details.map((detail, i) => ({
      messageId: `${detail.eventId}-${i}`,
      receiptHandle: `rh-${detail.eventId}-${i}`,
      body: JSON.stringify({ version: '0', id: detail.eventId, source: 'support-desk.tickets', 'detail-type': detail.event, time: detail.timestamp, detail }),
      attributes: { ApproximateReceiveCount: '1' },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:consumer-cost',
      awsRegion: 'us-east-1',
    })),
  }) as unknown as SQSEvent;

/** The store requests one invocation of a consumer with these events makes, by command (the function already warm). */
async function requests(consumer: keyof typeof CONSUMERS, details: Json[]): Promise<{ total: number; by: Record<string, number> }> {
  const fn = (await localLambda()).byEntry(CONSUMERS[consumer]);
  await fn.warm();
  await store.reset();
  const res = await fn.invoke<{ batchItemFailures?: unknown[] } | undefined>(sqsEvent(details));
  const stats = await store.reset();
  expect(res?.batchItemFailures ?? []).toEqual([]);
  return { total: stats.requests, by: stats.byCommand };
}

/** The account's events of a ticket still in its outbox, by type, oldest first. */
async function eventsOf(acct: TestAccount, ticketId: string, event: string): Promise<Json[]> {
  const items = (await outboxItems(acct.accountId)).filter((i) => i.detail.event === event && i.detail.data.ticket?.id === ticketId);
  return items.sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1)).map((i) => i.detail);
}

/** An account with an SLA policy, an automation that matches no ticket of this file, and a webhook on ticket events. */
async function busyAccount() {
  const acct = await createTestAccount();
  const d = as(client, acct.ownerKey);
  const minutes = { urgent: 60, high: 60, normal: 60, low: 60 };
  const policy = await d.post('/helpdesk/api/sla-policies', { name: 'All', timeMode: 'calendarHours', conditions: [], targets: { firstReply: minutes, nextReply: minutes, resolution: minutes } });
  expect(policy.status, policy.text).toBe(201);
  const automation = await d.post('/helpdesk/api/automations', {
    name: 'Never',
    rule: { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['never'] }], actions: [{ field: 'priority', value: 'low' }] },
  });
  expect(automation.status, automation.text).toBe(201);
  const hook = await d.post('/helpdesk/api/v1/webhooks', { webhook: { name: 'cost', targetUrl: receiver().url('/consumer-cost'), events: ['ticket.created', 'ticket.updated'] } });
  expect(hook.status, hook.text).toBe(201);
  return { acct, d };
}

describe('DynamoDB requests per event, per consumer', () => {
  it('an account with no SLA policy, automation or webhook: one Query per consumer for a ticket.created, and nothing written', async () => {
    // Arrange
    const acct = await createTestAccount();
    const ticket = await newTicket(as(client, acct.ownerKey), { subject: 'Quiet' });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    // Act
    const cost = { sla: await requests('sla', [created]), automations: await requests('automations', [created]), webhooks: await requests('webhooks', [created]) };
    console.log('ticket.created, account with nothing configured, DynamoDB requests', JSON.stringify(cost));
    // Assert: the SLA consumer reads the account's SLA settings and keeps no state (it used to read the state and the
    // ticket, list the policies and write a state: 4)
    expect(cost.sla).toEqual({ total: 1, by: { Query: 1 } });
    expect(cost.automations).toEqual({ total: 1, by: { Query: 1 } });
    expect(cost.webhooks).toEqual({ total: 1, by: { Query: 1 } });
    expect(await storedState(acct.accountId, ticket.id)).toBeNull();
  });

  it('an account with a policy, an automation and a webhook: the ticket is taken from ticket.created, read for ticket.updated', async () => {
    // Arrange
    const { acct, d } = await busyAccount();
    const ticket = await newTicket(d, { subject: 'Busy' });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    // Act: each event handled before the next change, as the pipeline does
    const onCreated = { sla: await requests('sla', [created]), automations: await requests('automations', [created]), webhooks: await requests('webhooks', [created]) };
    // The same ticket.created again (a redelivery): the SLA consumer finds the state there and changes nothing.
    const stateOnCreated = await storedState(acct.accountId, ticket.id);
    const onCreatedAgain = await requests('sla', [created]);
    expect(await storedState(acct.accountId, ticket.id)).toEqual(stateOnCreated);
    expect((await d.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'high' } })).status).toBe(200);
    const [updated] = await eventsOf(acct, ticket.id, 'ticket.updated');
    const onUpdated = { sla: await requests('sla', [updated]), automations: await requests('automations', [updated]), webhooks: await requests('webhooks', [updated]) };
    console.log('account with a policy, an automation and a webhook, DynamoDB requests', JSON.stringify({ onCreated, onUpdated }));
    // Assert: ticket.created: the SLA settings, then the first state written on the conditions that there is none and
    // that the ticket exists (it used to be 4: the state, the ticket, the policies, the write; then 3 with the state read);
    // automations: the list, and no match on the ticket as the event carries it (it used to read the run marker and the
    // ticket too: 3)
    expect(onCreated.sla).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    // Redelivered: the write refused (a state is there), then the state and the ticket read, and nothing written.
    expect(onCreatedAgain).toEqual({ total: 4, by: { Query: 1, TransactWriteItems: 1, GetItem: 2 } });
    expect(onCreated.automations).toEqual({ total: 1, by: { Query: 1 } });
    // The webhooks, and the delivery created
    expect(onCreated.webhooks).toEqual({ total: 2, by: { Query: 1, PutItem: 1 } });
    // ticket.updated carries only what changed: the SLA consumer reads the ticket, the automations consumer too (no longer its run marker first: it was 3)
    expect(onUpdated.sla).toEqual({ total: 4, by: { Query: 1, GetItem: 2, PutItem: 1 } });
    expect(onUpdated.automations).toEqual({ total: 2, by: { Query: 1, GetItem: 1 } });
    expect(onUpdated.webhooks).toEqual({ total: 2, by: { Query: 1, PutItem: 1 } });
    // The state is the ticket's, as it is now (version 2, priority high)
    expect(await storedState(acct.accountId, ticket.id)).toMatchObject({ facts: { ticketVersion: 2, priority: 'high' }, policy: { name: 'All' } });
  });

  it('an automation that matches a ticket.created: its automations, one read of the ticket and one transaction; redelivered, nothing more is written', async () => {
    // Arrange
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const rule = { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['vip'] }], actions: [{ field: 'priority', value: 'urgent' }] };
    expect((await d.post('/helpdesk/api/automations', { name: 'VIP', rule })).status).toBe(201);
    const ticket = await newTicket(d, { subject: 'Matched', tags: ['vip'] });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    // Act
    const first = await requests('automations', [created]);
    const again = await requests('automations', [created]);
    // Assert: the automations, the ticket (once: the rule is evaluated inside the update's plan; it was read twice: 4),
    // and the change with the event's run marker (it used to read the marker first: 5); redelivered, the ticket read
    // finds nothing left to change
    expect(first).toEqual({ total: 3, by: { Query: 1, GetItem: 1, TransactWriteItems: 1 } });
    expect(again).toEqual({ total: 2, by: { Query: 1, GetItem: 1 } });
    expect((await d.get(`${TICKETS}/${ticket.id}`)).body.ticket.priority).toBe('urgent');
    expect((await eventsOf(acct, ticket.id, 'ticket.updated')).map((e) => e.actor)).toEqual([{ type: 'automation', id: expect.any(String) }]);
  });

  it("a batch of ten ticket.created of one account shares one read of the account's SLA settings and automations", async () => {
    // Arrange
    const { acct, d } = await busyAccount();
    const tickets = await Promise.all(Array.from({ length: 10 }, (_, i) => newTicket(d, { subject: `Burst ${i}` })));
    const created = (await Promise.all(tickets.map((t) => eventsOf(acct, t.id, 'ticket.created')))).map(([e]) => e);
    // Act
    const sla = await requests('sla', created);
    const automations = await requests('automations', created);
    console.log('a batch of 10 ticket.created, DynamoDB requests', JSON.stringify({ sla, automations }));
    // Assert: one Query per batch, then per event a write (no state is read for a ticket.created)
    expect(sla).toEqual({ total: 11, by: { Query: 1, TransactWriteItems: 10 } });
    expect(automations).toEqual({ total: 1, by: { Query: 1 } });
  });

  it("an account whose policies were all deleted still moves its tickets' states on (they may hold a deleted policy's targets)", async () => {
    // Arrange: a state made under a policy, then the account's only policy deleted
    const { acct, d } = await busyAccount();
    const ticket = await newTicket(d, { subject: 'Orphaned' });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    await requests('sla', [created]);
    expect(await storedState(acct.accountId, ticket.id)).toMatchObject({ policy: { name: 'All' } });
    const [policy] = (await d.get('/helpdesk/api/sla-policies')).body.data;
    expect((await d.del(`/helpdesk/api/sla-policies/${policy.id}`)).status).toBe(204);
    expect((await d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'resolved' } })).status).toBe(200);
    const [updated] = await eventsOf(acct, ticket.id, 'ticket.updated');
    // Act
    const cost = await requests('sla', [updated]);
    // Assert: the settings, the state and the ticket read, the state written with no policy (nothing left to breach)
    expect(cost).toEqual({ total: 4, by: { Query: 1, GetItem: 2, PutItem: 1 } });
    expect(await storedState(acct.accountId, ticket.id)).toMatchObject({ policy: null, nextDueAt: null, facts: { status: 'resolved', ticketVersion: 2 } });
  });

  it('the view-count consumer, for an account with no view, reads its view set only, and still marks and tallies the event once', async () => {
    // Arrange
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const ticket = await newTicket(d, { subject: 'No views' });
    expect((await d.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'high' } })).status).toBe(200);
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    const [updated] = await eventsOf(acct, ticket.id, 'ticket.updated');
    // Act: each event, then the first again (a redelivery)
    const onCreated = await requests('views', [created]);
    const afterCreated = await storedViewTally(acct.accountId, created.eventId);
    const onUpdated = await requests('views', [updated]);
    const again = await requests('views', [created]);
    console.log('view-counts, account without views, DynamoDB requests', JSON.stringify({ onCreated, onUpdated, again }));
    // Assert: the view set (empty), then the event's mark and the tally's `applied` in one transaction; neither the
    // ticket nor its membership is read (it used to be 4: the view set, the membership, the ticket, the transaction)
    expect(onCreated).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    expect(onUpdated).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    // One change of two applied, then both; the redelivery is refused by the mark and tallies nothing twice
    expect(afterCreated).toEqual({ marked: true, made: 2, applied: 1 });
    expect(again).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    expect(await storedViewTally(acct.accountId, updated.eventId)).toEqual({ marked: true, made: 2, applied: 2 });
  });

  it('the view-count consumer marks a batch of ten events of an account with no view in one transaction, a redelivered one among them once', async () => {
    // Arrange: ten tickets, the first one's event already applied (a redelivery of it comes with the batch)
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const tickets = await Promise.all(Array.from({ length: 10 }, (_, i) => newTicket(d, { subject: `No views ${i}` })));
    const created = (await Promise.all(tickets.map((t) => eventsOf(acct, t.id, 'ticket.created')))).map(([e]) => e);
    const more = await Promise.all(Array.from({ length: 10 }, (_, i) => newTicket(d, { subject: `More ${i}` })));
    const moreCreated = (await Promise.all(more.map((t) => eventsOf(acct, t.id, 'ticket.created')))).map(([e]) => e);
    // Act
    const batch = await requests('views', created);
    const afterBatch = await storedViewTally(acct.accountId, created[9].eventId);
    const withRedelivery = await requests('views', [created[0], ...moreCreated.slice(0, 9)]);
    const afterRedelivery = await storedViewTally(acct.accountId, moreCreated[8].eventId);
    const rest = await requests('views', moreCreated.slice(9));
    console.log('view-counts, batches of 10 without views, DynamoDB requests', JSON.stringify({ batch, withRedelivery, rest }));
    // Assert: one read of the views and one transaction for the ten (it used to be 4 requests each)
    expect(batch).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    expect(afterBatch).toEqual({ marked: true, made: 20, applied: 10 });
    // The batch with a redelivered event: the gathered transaction refused by its mark, then each event alone (the
    // redelivered one refused again), and no change tallied twice
    expect(withRedelivery).toEqual({ total: 12, by: { Query: 1, TransactWriteItems: 11 } });
    expect(afterRedelivery).toEqual({ marked: true, made: 20, applied: 19 });
    expect(rest).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    expect(await storedViewTally(acct.accountId, moreCreated[9].eventId)).toEqual({ marked: true, made: 20, applied: 20 });
  });

  it('the view-count consumer, for an account with a view, reads the views and the ticket of a ticket.created (a new ticket has no membership) and writes once', async () => {
    // Arrange
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    expect((await d.post('/helpdesk/api/v1/views', { view: { title: 'Open', conditions: { all: [{ field: 'status', operator: 'is', value: 'open' }] } } })).status).toBe(201);
    const ticket = await newTicket(d, { subject: 'In a view' });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    // Act
    const cost = await requests('views', [created]);
    // Assert: the views and the ticket (it used to read the membership too: 4); the membership, the count, the set's
    // check, the mark and the tally in one transaction
    expect(cost).toEqual({ total: 3, by: { Query: 1, GetItem: 1, TransactWriteItems: 1 } });
    expect(await storedViewTally(acct.accountId, created.eventId)).toEqual({ marked: true, made: 1, applied: 1 });
  });

  it('the view-count consumer, a ticket.created overtaken by its ticket.updated: the membership written since refuses its write, and the ticket is counted once', async () => {
    // Arrange: a ticket in the view, and a change of it whose event is applied first
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const view = (await d.post('/helpdesk/api/v1/views', { view: { title: 'Open', conditions: { all: [{ field: 'status', operator: 'is', value: 'open' }] } } })).body.view;
    const ticket = await newTicket(d, { subject: 'Overtaken', status: 'open' });
    expect((await d.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'high' } })).status).toBe(200);
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    const [updated] = await eventsOf(acct, ticket.id, 'ticket.updated');
    await requests('views', [updated]);
    // Act
    const cost = await requests('views', [created]);
    // Assert: the views and the ticket read and the write of a new ticket, refused; then the views, the membership and
    // the ticket read again, and only the event marked (the ticket was counted by its ticket.updated)
    expect(cost).toEqual({ total: 7, by: { Query: 2, GetItem: 3, TransactWriteItems: 2 } });
    expect((await d.get(`/helpdesk/api/v1/views/${view.id}/count`)).body.count.value).toBe(1);
    expect(await storedViewTally(acct.accountId, created.eventId)).toMatchObject({ marked: true });
  });

  it('a ticket.created overtaken by the deletion of its ticket leaves no SLA state', async () => {
    // Arrange: the ticket deleted before the consumer sees its ticket.created
    const { acct, d } = await busyAccount();
    const ticket = await newTicket(d, { subject: 'Gone' });
    const [created] = await eventsOf(acct, ticket.id, 'ticket.created');
    expect((await d.del(`${TICKETS}/${ticket.id}`)).status).toBe(204);
    // Act
    const cost = await requests('sla', [created]);
    // Assert: the write was refused by its condition on the ticket, and nothing was left
    expect(cost).toEqual({ total: 2, by: { Query: 1, TransactWriteItems: 1 } });
    expect(await storedState(acct.accountId, ticket.id)).toBeNull();
  });
});

async function storedViewTally(accountId: string, eventId: string) {
  const { storedViewTally } = await import('../support/store.ts');
  return storedViewTally(accountId, eventId);
}

async function storedState(accountId: string, ticketId: string) {
  const { storedSlaState } = await import('../support/store.ts');
  return storedSlaState(accountId, ticketId);
}
