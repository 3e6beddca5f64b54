import { beforeAll, describe, expect, it } from 'vitest';
import { TicketEventPayloadSchemas } from '#shared/tickets/event-payloads.ts';
import { TicketEventDetailSchema, type TicketEventType } from '#shared/tickets/events.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, outboxItems, TICKETS, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

let acct: TestAccount;
let admin: Desk;
let agentId: string;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  agentId = (await acct.addUser('member')).id;
});

/** Ticket events recorded in the outbox for one ticket, oldest first. */
async function eventsOf(accountId: string, ticketId: string): Promise<Json[]> {
  const items = await outboxItems(accountId);
  return items
    .map((i) => i.detail)
    .filter((d) => d?.event?.startsWith('ticket.') && d.data?.ticket?.id === ticketId)
    .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
}

/** Every recorded event: evt_ id, stored item consistent with its detail, payload valid against its zod schema. */
function expectWellFormed(items: Json[]) {
  for (const item of items) {
    const d = item.detail;
    expect(d.eventId).toMatch(/^evt_/);
    expect(item.eventId).toBe(d.eventId);
    expect(item.sk).toBe(`OUTBOX#${d.eventId}`);
    expect(item.detailType).toBe(d.event);
    expect(item.source).toBe('support-desk.tickets');
    expect(d.accountId).toBe(acct.accountId);
    expect(TicketEventDetailSchema.safeParse(d).success).toBe(true);
    const payload = { event: d.event, timestamp: d.timestamp, data: d.data };
    const parsed = TicketEventPayloadSchemas[d.event as TicketEventType].safeParse(payload);
    expect(parsed.success, `${d.event}: ${parsed.error?.message}`).toBe(true);
  }
}

describe('ticket events in the outbox', () => {
  it('create records ticket.created whose data.ticket is the full ticket as answered', async () => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'Event me', priority: 'high', tags: ['e'], requesterEmail: 'ev@customer.example', requesterName: 'Ev' } });

    const events = await eventsOf(acct.accountId, res.body.ticket.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'ticket.created', accountId: acct.accountId, data: { ticket: res.body.ticket } });
    expect(events[0].data.ticket).toEqual(res.body.ticket);
    expect(events[0].timestamp).toBe(res.body.ticket.createdAt);
  });

  it('a PUT to resolved with a new assignee records ticket.updated, ticket.assignment.changed and ticket.resolved', async () => {
    const t = await newTicket(admin, { status: 'open', priority: 'low' });

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { status: 'resolved', assigneeId: agentId, priority: 'low' } });

    expect(res.status).toBe(200);
    const events = (await eventsOf(acct.accountId, t.id)).filter((e) => e.event !== 'ticket.created');
    expect(events.map((e) => e.event).sort()).toEqual(['ticket.assignment.changed', 'ticket.resolved', 'ticket.updated']);
    const byName = Object.fromEntries(events.map((e) => [e.event, e]));
    expect(byName['ticket.updated'].data).toEqual({ ticket: { id: t.id, updatedFields: { status: { from: 'open', to: 'resolved' }, assigneeId: { from: null, to: agentId } } } });
    expect(byName['ticket.assignment.changed'].data).toEqual({ ticket: { id: t.id, updatedFields: { assigneeId: { from: null, to: agentId } } } });
    expect(byName['ticket.resolved'].data).toEqual({ ticket: res.body.ticket });
    expect(new Set(events.map((e) => e.eventId)).size).toBe(3);
  });

  it('ticket.updated carries only the changed fields as {from, to}', async () => {
    const t = await newTicket(admin, { subject: 'Before', tags: ['a'] });

    await admin.put(`${TICKETS}/${t.id}`, { ticket: { subject: 'After', tags: ['a'], type: t.type } });

    const updated = (await eventsOf(acct.accountId, t.id)).filter((e) => e.event === 'ticket.updated');
    expect(updated).toHaveLength(1);
    expect(updated[0].data.ticket.updatedFields).toEqual({ subject: { from: 'Before', to: 'After' } });
  });

  it('a status change to something other than resolved records no ticket.resolved and no assignment event', async () => {
    const t = await newTicket(admin);

    await admin.put(`${TICKETS}/${t.id}`, { ticket: { status: 'pending' } });

    const names = (await eventsOf(acct.accountId, t.id)).map((e) => e.event);
    expect(names.sort()).toEqual(['ticket.created', 'ticket.updated']);
  });

  it('a PUT that changes nothing records no event', async () => {
    const t = await newTicket(admin, { priority: 'urgent', tags: ['same'] });

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { priority: 'urgent', tags: ['same'], subject: t.subject } });

    expect(res.status).toBe(200);
    expect(res.body.ticket).toEqual(t);
    expect((await eventsOf(acct.accountId, t.id)).map((e) => e.event)).toEqual(['ticket.created']);
  });

  it('a refused PUT records no event', async () => {
    const t = await newTicket(admin);

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { status: 'closed' } });

    expect(res.status).toBe(403);
    expect((await eventsOf(acct.accountId, t.id)).map((e) => e.event)).toEqual(['ticket.created']);
  });

  it('delete records ticket.deleted with data {ticket: {id}}', async () => {
    const t = await newTicket(admin);

    await admin.del(`${TICKETS}/${t.id}`);

    const deleted = (await eventsOf(acct.accountId, t.id)).filter((e) => e.event === 'ticket.deleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0].data).toEqual({ ticket: { id: t.id } });
  });

  it('every recorded event has an evt_ id and a payload valid against its schema', async () => {
    const t = await newTicket(admin, { assigneeId: agentId });
    await admin.put(`${TICKETS}/${t.id}`, { ticket: { assigneeId: null, status: 'resolved' } });
    await admin.del(`${TICKETS}/${t.id}`);

    const items = await outboxItems(acct.accountId);

    expect(items.length).toBeGreaterThanOrEqual(4);
    expectWellFormed(items.filter((i) => i.detail?.event?.startsWith('ticket.')));
    const ids = items.map((i) => i.detail.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('events of one account never appear under another account', async () => {
    const other = await createTestAccount();
    const t = await newTicket(as(client, other.ownerKey));

    const mine = await eventsOf(acct.accountId, t.id);
    const theirs = await eventsOf(other.accountId, t.id);

    expect(mine).toEqual([]);
    expect(theirs.map((e) => e.event)).toEqual(['ticket.created']);
  });
});
