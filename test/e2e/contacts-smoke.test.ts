import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

describe('contacts and organizations smoke', () => {
  it('links contacts by domain, keeps counts exact and unlinks on organization delete', async () => {
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    const org = await client.request('POST', '/helpdesk/api/organizations', { token, body: { name: 'Acme', organizationalDomain: 'ACME.com' } });
    expect(org.status).toBe(201);
    expect(org.body.data.organizationalDomain).toBe('acme.com');
    const orgId = org.body.data.id;
    const contact = await client.request('POST', '/helpdesk/api/contacts', { token, body: { name: 'Wile', email: 'wile@acme.com' } });
    expect(contact.status).toBe(201);
    expect(contact.body.data).toMatchObject({ organizationId: orgId, organizationName: 'Acme', ticketCount: 0 });
    const t1 = await client.request('POST', '/helpdesk/api/v1/tickets', { token, body: { ticket: { subject: 'Anvil', requesterEmail: 'wile@acme.com' } } });
    expect(t1.status).toBe(201);
    const t2 = await client.request('POST', '/helpdesk/api/v1/tickets', { token, body: { ticket: { subject: 'Rocket', requesterEmail: 'road@acme.com', requesterName: 'Road Runner' } } });
    expect(t2.status).toBe(201);
    const auto = await client.request('GET', '/helpdesk/api/contacts/by-email/road@acme.com', { token });
    expect(auto.body.data).toMatchObject({ name: 'Road Runner', organizationId: orgId, ticketCount: 1 });
    const orgNow = await client.request('GET', `/helpdesk/api/organizations/${orgId}`, { token });
    expect(orgNow.body.data).toMatchObject({ contactCount: 2, ticketCount: 2 });
    const list = await client.request('GET', `/helpdesk/api/contacts?organization_id=${orgId}&sort_by=name&sort_order=asc`, { token });
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(['Road Runner', 'Wile']);
    expect(list.body.meta).toEqual({ page: 1, limit: 15, total: 2, totalPages: 1 });
    const none = await client.request('GET', '/helpdesk/api/contacts/by-email/nobody@acme.com', { token });
    expect(none.body).toEqual({ success: true, data: null });
    expect((await client.request('DELETE', `/helpdesk/api/organizations/${orgId}`, { token })).status).toBe(204);
    const wile = await client.request('GET', `/helpdesk/api/contacts/${contact.body.data.id}`, { token });
    expect(wile.body.data).toMatchObject({ organizationId: null, organizationName: null, ticketCount: 1 });
  });
});
