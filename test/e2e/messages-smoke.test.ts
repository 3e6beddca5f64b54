import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

describe('messages smoke', () => {
  it('needs a session token, sanitizes content and applies ticket_update atomically', async () => {
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const t = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Hi', requesterEmail: 'c@x.io' } } });
    const ticketId = t.body.ticket.id;
    const withKey = await client.request('POST', '/helpdesk/api/messages', { token: acct.ownerKey, body: { ticket_id: ticketId, type: 'note', content: 'x' } });
    expect(withKey.status).toBe(401);
    expect(withKey.body.error.message).toMatch(/session token/);
    const msg = await client.request('POST', '/helpdesk/api/messages', {
      token: session,
      body: {
        ticket_id: ticketId,
        type: 'response',
        content: '<p onclick="x()">Hello <b>there</b> &amp; bye<script>alert(1)</script><a href="javascript:alert(1)">x</a></p>',
        ticket_update: { status: 'pending', priority: 'high' },
      },
    });
    expect(msg.status).toBe(201);
    expect(msg.body.data.content).not.toMatch(/script|onclick|javascript/);
    expect(msg.body.data.textContent).toBe('Hello there & byex');
    const after = await client.request('GET', `/helpdesk/api/v1/tickets/${ticketId}`, { token: acct.ownerKey });
    expect(after.body.ticket).toMatchObject({ status: 'pending', priority: 'high' });
    const bad = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticketId, type: 'note', content: 'x', ticket_update: { status: 'closed' } } });
    expect(bad.status).toBe(403);
    expect(bad.body.error.code).toBe('CLOSED_STATUS_SYSTEM_ONLY');
    const list = await client.request('GET', `/helpdesk/api/messages?ticket_id=${ticketId}`, { token: session });
    expect(list.body.meta).toEqual({ page: 1, limit: 50, total: 1, totalPages: 1 });
    const one = await client.request('GET', `/helpdesk/api/messages/${msg.body.data.id}`, { token: session });
    expect(one.body.data.id).toBe(msg.body.data.id);
  });
});
