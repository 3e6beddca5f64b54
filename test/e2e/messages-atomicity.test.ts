import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, tableName } from '#shared/db/client.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { closeTicketDirectly, inBatches } from '../support/helpdesk.ts';

const { client } = useGateway();

async function outboxEvents(accountId: string) {
  const out = await ddb.send(
    new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `A#${accountId}`, ':p': 'OUTBOX#' } }),
  );
  return (out.Items ?? []).map((i) => i.detail as { event: string; data: any });
}

describe('messages and their ticket_update are one transaction', () => {
  it.each([
    [{ status: 'closed' }, 403, 'CLOSED_STATUS_SYSTEM_ONLY'],
    [{ priority: 'bogus' }, 422, 'VALIDATION_ERROR'],
  ])('an invalid ticket_update %j leaves neither the message nor a ticket change behind', async (ticketUpdate, status, code) => {
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const t = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Atomic' } } });
    const before = await client.request('GET', `/helpdesk/api/v1/tickets/${t.body.ticket.id}`, { token: acct.ownerKey });
    const res = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: t.body.ticket.id, type: 'response', content: '<p>x</p>', ticket_update: ticketUpdate } });
    expect(res.status).toBe(status);
    expect(res.body.error.code).toBe(code);
    const list = await client.request('GET', `/helpdesk/api/messages?ticket_id=${t.body.ticket.id}`, { token: session });
    expect(list.body.meta.total).toBe(0);
    const after = await client.request('GET', `/helpdesk/api/v1/tickets/${t.body.ticket.id}`, { token: acct.ownerKey });
    expect(after.body).toEqual(before.body);
    expect((await outboxEvents(acct.accountId)).map((e) => e.event)).toEqual(['ticket.created']);
  });

  it('refuses a message on a closed ticket with 403 TICKET_CLOSED', async () => {
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const t = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Closing' } } });
    // Only automations close tickets; write the closed state the way they would.
    await closeTicketDirectly(acct.accountId, t.body.ticket.id);
    const res = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: t.body.ticket.id, type: 'note', content: 'late' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ success: false, error: { code: 'TICKET_CLOSED', message: expect.any(String) } });
  });

  it('30 messages with ticket_update on one ticket, 10 in flight at a time, all land, with no lost update', async () => {
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const t = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Busy', priority: 'low' } } });
    const id = t.body.ticket.id;
    const priorities = ['normal', 'high', 'urgent', 'low'];
    // 10 in flight, not 30: with 30 at once on one ticket a loaded machine answered some with the retryable 503
    // (decisions §3), which this all-land check cannot take; 10 concurrent updates of one ticket still race every time.
    const results = await inBatches(30, 10, (i) =>
      client.request('POST', '/helpdesk/api/messages', {
        token: session,
        body: { ticket_id: id, type: 'note', content: `<p>${i}</p>`, ticket_update: { priority: priorities[i % 4], ...(i === 29 ? { type: 'incident' } : {}) } },
      }),
    );
    expect(results.map((r) => r.status)).toEqual(Array(30).fill(201));
    const list = await client.request('GET', `/helpdesk/api/messages?ticket_id=${id}&limit=100`, { token: session });
    expect(list.body.meta.total).toBe(30);
    // Every effective change produced exactly one ticket.updated, and they chain: each one's `from` is the previous `to`.
    const updates = (await outboxEvents(acct.accountId)).filter((e) => e.event === 'ticket.updated').map((e) => e.data.ticket.updatedFields);
    const priorityChanges = updates.filter((u) => u.priority);
    const final = await client.request('GET', `/helpdesk/api/v1/tickets/${id}`, { token: acct.ownerKey });
    expect(final.body.ticket.type).toBe('incident');
    // Serialized changes form one chain from the original priority to the final one: every value is left as often
    // as it is reached, except the start (left once more) and the end (reached once more).
    const balance = new Map<string, number>();
    for (const u of priorityChanges) {
      balance.set(u.priority.from, (balance.get(u.priority.from) ?? 0) + 1);
      balance.set(u.priority.to, (balance.get(u.priority.to) ?? 0) - 1);
    }
    const end = final.body.ticket.priority;
    for (const [value, b] of balance) expect(b, value).toBe(value === end && value === 'low' ? 0 : value === 'low' ? 1 : value === end ? -1 : 0);
    const messageEvents = (await outboxEvents(acct.accountId)).filter((e) => e.event === 'message.created');
    expect(messageEvents).toHaveLength(30);
  });
});
