import { describe, expect, it } from 'vitest';
import { eventually } from '../support/wait.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newField, newTicket, outboxItems, TICKETS, type Desk } from '../support/desk.ts';
import { changeTicketInStore, storedOptions, storedTicket, timeRuleAccounts } from '../support/store.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/automations';
const { mine, pipeline } = usePipeline(['automations', 'automation-time-rules']);

async function setup(): Promise<{ acct: TestAccount; admin: Desk }> {
  const acct = await createTestAccount();
  mine.add(acct.accountId);
  return { acct, admin: as(client, acct.ownerKey) };
}

async function automation(admin: Desk, name: string, rule: unknown): Promise<{ id: string }> {
  const res = await admin.post(BASE, { name, rule });
  if (res.status !== 201) throw new Error(`create automation: ${res.status} ${res.text}`);
  return res.body.data;
}

const getTicket = async (admin: Desk, id: string) => (await admin.get(`${TICKETS}/${id}`)).body.ticket;
const until = (admin: Desk, id: string, ok: (t: any) => boolean, what: string) =>
  eventually(
    async () => {
      const t = await getTicket(admin, id);
      return ok(t) ? t : null;
    },
    15_000,
    what,
  );
/** Wait until the pipeline has handled everything (events the automation's own writes caused included). */
const settle = () => pipeline().drained();

/** The ticket's stored version: every write bumps it by one, so it counts the writes a ticket got. */
async function versionOf(accountId: string, ticketId: string): Promise<number> {
  return (await storedTicket(accountId, ticketId)).version;
}

/**
 * The ticket's events still in the outbox, oldest first, with who acted. Only
 * for accounts this file's pipeline does not publish (published items are removed).
 */
async function eventsOf(accountId: string, ticketId: string) {
  const items = await outboxItems(accountId);
  return items
    .filter((i) => i.detail.data.ticket?.id === ticketId)
    .sort((a, b) => (a.eventId < b.eventId ? -1 : 1))
    .map((i) => ({ event: i.detail.event as string, actor: i.detail.actor?.type ?? null, detail: i.detail }));
}

const tagged = (tag: string) => ({ field: 'tags', op: 'containsoneormoreof', value: [tag] });

describe('automations through the local pipeline', () => {
  it('closes a ticket tagged x within seconds; a message to it is then 403 TICKET_CLOSED', async () => {
    // Arrange
    const { acct, admin } = await setup();
    const rule = await automation(admin, 'Close x', { all: [tagged('x')], actions: [{ field: 'status', value: 'closed' }] });

    // Act
    const ticket = await newTicket(admin, { tags: ['x'] });

    // Assert
    const closed = await until(admin, ticket.id, (t) => t.status === 'closed', 'the automation to close the ticket');
    expect(closed.tags).toEqual(['x']);
    const session = await acct.session(acct.ownerId);
    const msg = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.id, type: 'note', content: 'too late' } });
    expect(msg.status).toBe(403);
    expect(msg.body.error.code).toBe('TICKET_CLOSED');
    expect((await admin.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'high' } })).body.error.code).toBe('TICKET_CLOSED');
    expect(await versionOf(acct.accountId, ticket.id)).toBe(2);
    expect(rule.id).toMatch(/^aut_/);
  });

  it('applies only the first matching automation, and reorder changes which one wins', async () => {
    const { acct, admin } = await setup();
    const close = await automation(admin, 'Close x', { all: [tagged('x')], actions: [{ field: 'status', value: 'closed' }] });
    const urgent = await automation(admin, 'Urgent x', { all: [tagged('x')], actions: [{ field: 'priority', value: 'urgent' }] });

    const first = await newTicket(admin, { tags: ['x'] });
    const closed = await until(admin, first.id, (t) => t.status === 'closed', 'the first rule');
    expect(closed.priority).toBe('normal');

    expect((await admin.put(`${BASE}/reorder`, { orderedIds: [urgent.id, close.id] })).status).toBe(200);
    const second = await newTicket(admin, { tags: ['x'] });
    const escalated = await until(admin, second.id, (t) => t.priority === 'urgent', 'the reordered first rule');
    await settle();
    expect((await getTicket(admin, second.id)).status).toBe(escalated.status);
    expect(escalated.status).toBe('new');
    expect(await versionOf(acct.accountId, second.id)).toBe(2);
  });

  it('does not loop when its own change would match again, and a no-op writes nothing', async () => {
    const { acct, admin } = await setup();
    await automation(admin, 'Mark new', {
      all: [{ field: 'status', op: 'equals', value: 'new' }],
      actions: [
        { field: 'addTags', value: ['seen'] },
        { field: 'priority', value: 'high' },
      ],
    });

    const ticket = await newTicket(admin);
    await until(admin, ticket.id, (t) => t.tags.includes('seen'), 'the tag');
    await settle();
    expect(await versionOf(acct.accountId, ticket.id)).toBe(2);

    // A user's change re-evaluates: the rule still matches, but its actions change nothing.
    expect((await admin.put(`${TICKETS}/${ticket.id}`, { ticket: { subject: 'Renamed' } })).status).toBe(200);
    await settle();
    expect(await versionOf(acct.accountId, ticket.id)).toBe(3);
    expect(await getTicket(admin, ticket.id)).toMatchObject({ subject: 'Renamed', priority: 'high', tags: ['seen'] });
  });

  it('records who acted, skips events automations caused, and applies a redelivered event once', async () => {
    // An account this file's pipeline does not publish: its events stay in the outbox, and the consumer is called by hand.
    const acct = await createTestAccount();
    const admin = as(client, acct.ownerKey);
    const rule = await automation(admin, 'Count', { all: [tagged('once')], actions: [{ field: 'addTags', value: ['done'] }] });
    const ticket = await newTicket(admin, { tags: ['once'] });
    const { onTicketEvent } = await import('#shared/automations/service.ts');
    const [created] = await eventsOf(acct.accountId, ticket.id);

    expect(await onTicketEvent(created.detail)).toBe('applied');
    const events = await eventsOf(acct.accountId, ticket.id);
    expect(events.map((e) => [e.event, e.actor])).toEqual([
      ['ticket.created', null],
      ['ticket.updated', 'automation'],
    ]);
    expect(events[1].detail.actor).toEqual({ type: 'automation', id: rule.id });
    expect(events[1].detail.data.ticket.updatedFields).toEqual({ tags: { from: ['once'], to: ['once', 'done'] } });
    // The automation's own event never triggers automations.
    expect(await onTicketEvent(events[1].detail)).toBe('skipped');

    // Take the tag away without an event, so a second application would show; then SQS hands over the same event again.
    await changeTicketInStore(acct.accountId, ticket.id, { tags: ['once'] });
    expect(await onTicketEvent(created.detail)).toBe('duplicate');
    expect((await getTicket(admin, ticket.id)).tags).toEqual(['once']);
    expect(await eventsOf(acct.accountId, ticket.id)).toHaveLength(2);

    // A user's edit is recorded as the user's.
    expect((await admin.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'low' } })).status).toBe(200);
    expect((await eventsOf(acct.accountId, ticket.id)).at(-1)!.detail.actor).toEqual({ type: 'user', id: acct.ownerId });
  });

  it('the hourly job applies a time rule to open tickets, and only time rules', async () => {
    const { acct, admin } = await setup();
    // Zendesk's pattern: the action nullifies a condition (pending -> closed), so the rule fires once.
    const stale = await automation(admin, 'Close stale pending', {
      all: [
        { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 48 },
        { field: 'status', op: 'equals', value: 'pending' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    });
    const pending = await newTicket(admin, { status: 'pending' });
    const fresh = await newTicket(admin, { status: 'open' });
    await settle();
    expect((await getTicket(admin, pending.id)).status).toBe('pending'); // the event-time evaluation saw 0 hours
    // A later non-time rule that would match both: the hourly pass must not apply it.
    await automation(admin, 'Tag everything', { all: [{ field: 'status', op: 'notequal', value: 'closed' }], actions: [{ field: 'addTags', value: ['tagged'] }] });

    // Act: run the job as if 49 hours had passed.
    const out: any = await pipeline().runSchedule('automation-time-rules', { time: new Date(Date.now() + 49 * 3_600_000).toISOString() });

    // Assert
    expect(out.accounts).toBeGreaterThanOrEqual(1);
    const closed = await until(admin, pending.id, (t) => t.status === 'closed', 'the time rule');
    expect(closed.tags).toEqual([]);
    await settle();
    expect(await getTicket(admin, fresh.id)).toMatchObject({ status: 'open', tags: [] });
    expect(await versionOf(acct.accountId, pending.id)).toBe(2);
    expect(await versionOf(acct.accountId, fresh.id)).toBe(1);

    // Once the account has no active time rule it leaves the job's list.
    expect((await admin.put(`${BASE}/${stale.id}`, { isActive: false })).status).toBe(200);
    expect(await timeRuleAccounts()).not.toContain(acct.accountId);
  });

  it('a time-rule message that fails is reported on its own; the rest of its batch is evaluated', async () => {
    const { acct, admin } = await setup();
    await automation(admin, 'Close stale pending', {
      all: [
        { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 48 },
        { field: 'status', op: 'equals', value: 'pending' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    });
    const pending = await newTicket(admin, { status: 'pending' });
    const consumer = (await localLambda()).byEntry('functions/automations/time-rules-consumer.ts');

    // Act: the deployed consumer gets a body that will never parse beside a good batch.
    const now = new Date(Date.now() + 49 * 3_600_000).toISOString();
    const res = await consumer.invoke<{ batchItemFailures: unknown[] }>({
      Records: [
        { messageId: 'bad', body: '{' },
        { messageId: 'good', body: JSON.stringify({ accountId: acct.accountId, ticketIds: [pending.id], now }) },
      ],
    });

    // Assert
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect((await getTicket(admin, pending.id)).status).toBe('closed');
  });

  it('50 tickets created at once each get the action exactly once, with exact option usage', async () => {
    // Arrange
    const { acct, admin } = await setup();
    const tier = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    await automation(admin, 'Bulk', {
      all: [tagged('bulk')],
      actions: [
        { field: 'priority', value: 'urgent' },
        { field: `customField:${tier.id}`, value: 'gold' },
      ],
    });

    // Act
    const created = await Promise.all(Array.from({ length: 50 }, (_, i) => admin.post(TICKETS, { ticket: { subject: `Bulk ${i}`, tags: ['bulk'], requesterEmail: 'bulk@customer.example' } })));
    expect(created.every((r) => r.status === 201)).toBe(true);
    const ids = created.map((r) => r.body.ticket.id as string);

    // Assert
    await eventually(async () => (await Promise.all(ids.map((id) => getTicket(admin, id)))).every((t) => t.priority === 'urgent'), 40_000, 'all 50 applications');
    await settle();
    expect(await Promise.all(ids.map((id) => versionOf(acct.accountId, id)))).toEqual(Array(50).fill(2));
    const [gold] = await storedOptions(acct.accountId, tier.id);
    expect(gold.usageCount).toBe(50);
    const contact = await admin.get('/helpdesk/api/contacts/by-email/bulk@customer.example');
    if (contact.body.data) expect(contact.body.data.ticketCount).toBe(50);
    const list = await admin.get(`${TICKETS}?priority=urgent&page_size=100`);
    expect(list.body.tickets).toHaveLength(50);
  }, 60_000);
});
