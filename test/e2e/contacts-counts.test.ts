import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';

const { client } = useGateway();
const ORGS = '/helpdesk/api/organizations';
const CONTACTS = '/helpdesk/api/contacts';
const TICKETS = '/helpdesk/api/v1/tickets';

const org = async (acct: TestAccount, id: string) => (await client.request('GET', `${ORGS}/${id}`, { token: acct.ownerKey })).body.data;
const contact = async (acct: TestAccount, id: string) => (await client.request('GET', `${CONTACTS}/${id}`, { token: acct.ownerKey })).body.data;

describe('contact and organization counts stay exact', () => {
  it('after creates, moves between organizations, requester changes and deletes', async () => {
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    const a = (await client.request('POST', ORGS, { token, body: { name: 'A', organizationalDomain: 'a.example' } })).body.data.id;
    const b = (await client.request('POST', ORGS, { token, body: { name: 'B', organizationalDomain: 'b.example' } })).body.data.id;
    // Tickets before the contact exists still count for it.
    await client.request('POST', TICKETS, { token, body: { ticket: { subject: 't1', requesterEmail: 'x@a.example' } } });
    await client.request('POST', TICKETS, { token, body: { ticket: { subject: 't2', requesterEmail: 'X@A.example' } } });
    const x = await client.request('GET', `${CONTACTS}/by-email/x@a.example`, { token });
    expect(x.body.data).toMatchObject({ organizationId: a, ticketCount: 2 });
    expect(await org(acct, a)).toMatchObject({ contactCount: 1, ticketCount: 2 });

    const y = (await client.request('POST', CONTACTS, { token, body: { name: 'Y', email: 'y@b.example' } })).body.data;
    expect(y.organizationId).toBe(b);
    const t3 = (await client.request('POST', TICKETS, { token, body: { ticket: { subject: 't3', requesterEmail: 'y@b.example' } } })).body.ticket.id;
    expect(await org(acct, b)).toMatchObject({ contactCount: 1, ticketCount: 1 });

    // Move x (2 tickets) from A to B.
    const moved = await client.request('PATCH', `${CONTACTS}/${x.body.data.id}`, { token, body: { organizationId: b } });
    expect(moved.body.data).toMatchObject({ organizationId: b, organizationName: 'B', ticketCount: 2 });
    expect(await org(acct, a)).toMatchObject({ contactCount: 0, ticketCount: 0 });
    expect(await org(acct, b)).toMatchObject({ contactCount: 2, ticketCount: 3 });

    // A ticket changes requester from y to x: counts follow.
    await client.request('PUT', `${TICKETS}/${t3}`, { token, body: { ticket: { requesterEmail: 'x@a.example' } } });
    expect((await contact(acct, y.id)).ticketCount).toBe(0);
    expect((await contact(acct, x.body.data.id)).ticketCount).toBe(3);
    expect(await org(acct, b)).toMatchObject({ contactCount: 2, ticketCount: 3 });

    // Deleting a ticket and a contact.
    await client.request('DELETE', `${TICKETS}/${t3}`, { token });
    expect(await org(acct, b)).toMatchObject({ ticketCount: 2 });
    await client.request('DELETE', `${CONTACTS}/${x.body.data.id}`, { token });
    expect(await org(acct, b)).toMatchObject({ contactCount: 1, ticketCount: 0 });

    // Recreated, the contact finds its remaining tickets again (and its organization counts them).
    const again = (await client.request('POST', CONTACTS, { token, body: { name: 'X again', email: 'x@a.example' } })).body.data;
    expect(again).toMatchObject({ organizationId: a, ticketCount: 2 });
    expect(await org(acct, a)).toMatchObject({ contactCount: 1, ticketCount: 2 });
  });

  it('stay exact under parallel ticket creation for one new requester', async () => {
    const acct = await createTestAccount();
    const o = (await client.request('POST', ORGS, { token: acct.ownerKey, body: { name: 'Busy', organizationalDomain: 'busy.example' } })).body.data.id;
    const results = await Promise.all(
      Array.from({ length: 15 }, (_, i) => client.request('POST', TICKETS, { token: acct.ownerKey, body: { ticket: { subject: `p${i}`, requesterEmail: 'same@busy.example' } } })),
    );
    expect(results.map((r) => r.status)).toEqual(Array(15).fill(201));
    const c = await client.request('GET', `${CONTACTS}/by-email/same@busy.example`, { token: acct.ownerKey });
    expect(c.body.data.ticketCount).toBe(15);
    expect(await org(acct, o)).toMatchObject({ contactCount: 1, ticketCount: 15 });
  });

  it('does not link free-mail contacts, and unlinks every contact when the organization is deleted', async () => {
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    await client.request('POST', ORGS, { token, body: { organizationalDomain: 'gmail.com' } });
    const free = await client.request('POST', CONTACTS, { token, body: { name: 'Free', email: 'someone@gmail.com' } });
    expect(free.body.data.organizationId).toBeNull();
    const big = (await client.request('POST', ORGS, { token, body: { name: 'Big', organizationalDomain: 'big.example' } })).body.data.id;
    await Promise.all(Array.from({ length: 45 }, (_, i) => client.request('POST', CONTACTS, { token, body: { name: `P${i}`, email: `p${i}@big.example` } })));
    expect((await org(acct, big)).contactCount).toBe(45);
    expect((await client.request('DELETE', `${ORGS}/${big}`, { token })).status).toBe(204);
    const linked = await client.request('GET', `${CONTACTS}?organization_id=${big}`, { token });
    expect(linked.body.meta.total).toBe(0);
    const all = await client.request('GET', `${CONTACTS}?limit=100&search=big.example`, { token });
    expect(all.body.meta.total).toBe(45);
    expect(all.body.data.every((c: { organizationId: string | null }) => c.organizationId === null)).toBe(true);
  });

  it('validates organizations and contacts: host names, lengths, duplicates', async () => {
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    for (const bad of ['http://acme.com', 'acme.com/x', 'a b.com', 'acme..com', '', 'x'.repeat(130) + '.com']) {
      const res = await client.request('POST', ORGS, { token, body: { organizationalDomain: bad } });
      expect(res.status, bad).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await client.request('POST', ORGS, { token, body: { organizationalDomain: 'ACME.com' } })).body.data.organizationalDomain).toBe('acme.com');
    const dup = await client.request('POST', ORGS, { token, body: { organizationalDomain: 'acme.COM' } });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('CONFLICT');
    const longName = await client.request('POST', CONTACTS, { token, body: { name: 'n'.repeat(129), email: 'ok@example.com' } });
    expect(longName.status).toBe(422);
    expect(longName.body.error.details[0].field).toBe('name');
    expect((await client.request('POST', CONTACTS, { token, body: { name: 'Ok', email: 'ok@example.com' } })).status).toBe(201);
    const dupContact = await client.request('POST', CONTACTS, { token, body: { name: 'Ok2', email: 'OK@example.com' } });
    expect(dupContact.status).toBe(409);
    expect(dupContact.body.error.code).toBe('CONFLICT');
    const viewer = await acct.addUser('viewer');
    expect((await client.request('POST', CONTACTS, { token: viewer.key, body: { name: 'V', email: 'v@example.com' } })).status).toBe(403);
    expect((await client.request('GET', CONTACTS, { token: viewer.key })).status).toBe(200);
    expect((await client.request('GET', `${CONTACTS}?limit=101`, { token })).status).toBe(400);
    expect((await client.request('GET', `${ORGS}?page=0`, { token })).status).toBe(400);
  });
});
