/** Contacts: create, read, update and delete, who may do which, and the organization name and ticket count a contact shows. */
import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, CONTACTS, contactByEmail, expectDeskError, expectValidation, getContact, getTicket, must, newContact, newOrg, newTicket, ORGS, TICKETS } from '../support/helpdesk.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

const list = async (d: ReturnType<typeof as>, query: string) => must(await d.get(`${CONTACTS}?${query}`), 200, `list ${query}`);

describe('contact create, read, update, delete', () => {
  it('creates a contact: 201 with {success, data} and every attribute', async () => {
    const { d } = await setup();

    const res = await d.post(CONTACTS, { name: 'Wile E. Coyote', email: 'wile@desert.example', notes: 'Buys anvils' });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^con_/),
        name: 'Wile E. Coyote',
        email: 'wile@desert.example',
        organizationId: null,
        organizationName: null,
        notes: 'Buys anvils',
        ticketCount: 0,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      },
    });
    expect(await getContact(d, res.body.data.id)).toEqual(res.body.data);
  });

  it('gets a contact by id, and by email case-insensitively; an unknown email is {success:true,data:null}', async () => {
    const { d } = await setup();
    const c = await newContact(d, { name: 'Road Runner', email: 'Road.Runner@desert.example' });

    const byId = await d.get(`${CONTACTS}/${c.id}`);
    const byEmail = await d.get(`${CONTACTS}/by-email/road.runner%40DESERT.example`);
    const none = await d.get(`${CONTACTS}/by-email/nobody%40desert.example`);
    const missing = await d.get(`${CONTACTS}/con_doesnotexist`);

    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ success: true, data: c });
    expect(byEmail.status).toBe(200);
    expect(byEmail.body).toEqual({ success: true, data: c });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ success: true, data: null });
    expectDeskError(missing, 404, 'NOT_FOUND');
  });

  it('accepts name and email of exactly 128 characters and refuses 129 with 422 VALIDATION_ERROR details', async () => {
    const { d } = await setup();
    const email128 = `${'e'.repeat(128 - '@limits.example'.length)}@limits.example`;
    const email129 = `x${email128}`;

    const okName = await d.post(CONTACTS, { name: 'n'.repeat(128), email: 'name128@limits.example' });
    const okEmail = await d.post(CONTACTS, { name: 'Long email', email: email128 });
    const longName = await d.post(CONTACTS, { name: 'n'.repeat(129), email: 'name129@limits.example' });
    const longEmail = await d.post(CONTACTS, { name: 'Too long email', email: email129 });
    const patchLong = await d.patch(`${CONTACTS}/${okName.body.data.id}`, { name: 'm'.repeat(129) });

    expect(okName.status).toBe(201);
    expect(okEmail.status).toBe(201);
    expectValidation(longName, 'name');
    expectValidation(longEmail, 'email');
    expectValidation(patchLong, 'name');
    expect((await getContact(d, okName.body.data.id)).name).toBe('n'.repeat(128));
  });

  it.each([
    ['a bad email', { name: 'X', email: 'not-an-email' }, 'email'],
    ['an email without a domain', { name: 'X', email: 'x@' }, 'email'],
    ['a missing email', { name: 'X' }, 'email'],
    ['a missing name', { email: 'x@ok.example' }, 'name'],
    ['an empty name', { name: '   ', email: 'x@ok.example' }, 'name'],
    ['an organizationId of no organization', { name: 'X', email: 'x@ok.example', organizationId: 'org_doesnotexist' }, 'organizationId'],
  ])('refuses %s with 422 VALIDATION_ERROR and creates nothing', async (_what, body, field) => {
    const { d } = await setup();

    const res = await d.post(CONTACTS, body);

    expectValidation(res, field);
    expect((await list(d, '')).meta.total).toBe(0);
  });

  it('refuses a duplicate email, whatever its case, with 409 CONFLICT on create and on update', async () => {
    const { d } = await setup();
    await newContact(d, { name: 'First', email: 'dup@example.com' });
    const other = await newContact(d, { name: 'Other', email: 'other@example.com' });

    const dupCreate = await d.post(CONTACTS, { name: 'Second', email: 'DUP@Example.COM' });
    const dupUpdate = await d.patch(`${CONTACTS}/${other.id}`, { email: 'Dup@example.com' });

    expectDeskError(dupCreate, 409, 'CONFLICT');
    expectDeskError(dupUpdate, 409, 'CONFLICT');
    expect((await getContact(d, other.id)).email).toBe('other@example.com');
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('PATCH changes only the given fields', async () => {
    const { d } = await setup();
    const org = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });
    const c = await newContact(d, { name: 'Wile', email: 'wile@acme.example', notes: 'first note' });

    const notes = await d.patch(`${CONTACTS}/${c.id}`, { notes: 'second note' });
    const renamed = await d.patch(`${CONTACTS}/${c.id}`, { name: 'Wile E.' });
    const emailed = await d.patch(`${CONTACTS}/${c.id}`, { email: 'coyote@acme.example' });
    const empty = await d.patch(`${CONTACTS}/${c.id}`, {});

    expect(notes.status).toBe(200);
    expect(notes.body.data).toEqual({ ...c, notes: 'second note' });
    expect(renamed.body.data).toEqual({ ...c, notes: 'second note', name: 'Wile E.' });
    expect(emailed.body.data).toEqual({ ...c, notes: 'second note', name: 'Wile E.', email: 'coyote@acme.example', organizationId: org.id, organizationName: 'Acme' });
    expect(empty.status).toBe(200);
    expect(empty.body.data).toEqual(emailed.body.data);
    expect(await contactByEmail(d, 'wile@acme.example')).toBeNull();
    expect((await contactByEmail(d, 'coyote@acme.example')).id).toBe(c.id);
  });

  it('PATCH organizationId links, moves and (with null) unlinks a contact', async () => {
    const { d } = await setup();
    const a = await newOrg(d, { name: 'A', organizationalDomain: 'a.example' });
    const b = await newOrg(d, { name: 'B', organizationalDomain: 'b.example' });
    const c = await newContact(d, { name: 'Mover', email: 'mover@elsewhere.example' });

    const linked = await d.patch(`${CONTACTS}/${c.id}`, { organizationId: a.id });
    const moved = await d.patch(`${CONTACTS}/${c.id}`, { organizationId: b.id });
    const unlinked = await d.patch(`${CONTACTS}/${c.id}`, { organizationId: null });
    const bogus = await d.patch(`${CONTACTS}/${c.id}`, { organizationId: 'org_doesnotexist' });

    expect(linked.body.data).toMatchObject({ organizationId: a.id, organizationName: 'A' });
    expect(moved.body.data).toMatchObject({ organizationId: b.id, organizationName: 'B' });
    expect(unlinked.body.data).toMatchObject({ organizationId: null, organizationName: null });
    expectValidation(bogus, 'organizationId');
    expect((await getContact(d, c.id)).organizationId).toBeNull();
  });

  it('DELETE answers 204 with no body; the contact is gone and its tickets stay', async () => {
    const { d } = await setup();
    const c = await newContact(d, { name: 'Leaving', email: 'leaving@example.com' });
    const t = await newTicket(d, { requesterEmail: 'leaving@example.com' });

    const res = await d.del(`${CONTACTS}/${c.id}`);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectDeskError(await d.get(`${CONTACTS}/${c.id}`), 404, 'NOT_FOUND');
    expect(await contactByEmail(d, 'leaving@example.com')).toBeNull();
    expect((await getTicket(d, t.id)).requesterEmail).toBe('leaving@example.com');
    expectDeskError(await d.del(`${CONTACTS}/${c.id}`), 404, 'NOT_FOUND');
    // The email is free again.
    expect((await d.post(CONTACTS, { name: 'Back', email: 'leaving@example.com' })).status).toBe(201);
  });
});

describe('contact permissions and tenant isolation', () => {
  it('a viewer reads contacts but every write is 403 FORBIDDEN and changes nothing', async () => {
    const { acct, d } = await setup();
    const c = await newContact(d, { name: 'Kept', email: 'kept@example.com' });
    const viewer = as(client, (await acct.addUser('viewer')).key);

    const reads = [await viewer.get(CONTACTS), await viewer.get(`${CONTACTS}/${c.id}`), await viewer.get(`${CONTACTS}/by-email/kept%40example.com`)];
    const create = await viewer.post(CONTACTS, { name: 'V', email: 'v@example.com' });
    const update = await viewer.patch(`${CONTACTS}/${c.id}`, { name: 'Changed' });
    const remove = await viewer.del(`${CONTACTS}/${c.id}`);

    expect(reads.map((r) => r.status)).toEqual([200, 200, 200]);
    expectDeskError(create, 403, 'FORBIDDEN');
    expectDeskError(update, 403, 'FORBIDDEN');
    expectDeskError(remove, 403, 'FORBIDDEN');
    expect(await getContact(d, c.id)).toEqual(c);
    expect((await list(d, '')).meta.total).toBe(1);
  });

  it('a member (agent) creates, updates and deletes contacts, with an API key or a session token', async () => {
    const { acct } = await setup();
    const member = await acct.addUser('member');
    const byKey = as(client, member.key);
    const bySession = as(client, await acct.session(member.id));

    const created = await byKey.post(CONTACTS, { name: 'Agent made', email: 'agent@example.com' });
    const updated = await bySession.patch(`${CONTACTS}/${created.body.data.id}`, { notes: 'by session' });
    const deleted = await byKey.del(`${CONTACTS}/${created.body.data.id}`);

    expect(created.status).toBe(201);
    expect(updated.status).toBe(200);
    expect(updated.body.data.notes).toBe('by session');
    expect(deleted.status).toBe(204);
  });

  it("another account's contact answers 404 NOT_FOUND to read, update and delete, and never shows in lists", async () => {
    const { d } = await setup();
    const theirs = await newContact(d, { name: 'Theirs', email: 'theirs@example.com' });
    const other = await createTestAccount();
    const o = as(client, other.ownerKey);

    const get = await o.get(`${CONTACTS}/${theirs.id}`);
    const patch = await o.patch(`${CONTACTS}/${theirs.id}`, { name: 'Hijacked' });
    const del = await o.del(`${CONTACTS}/${theirs.id}`);
    const byEmail = await o.get(`${CONTACTS}/by-email/theirs%40example.com`);
    const listed = await o.get(`${CONTACTS}?search=theirs`);
    // The same email is free in the other account.
    const same = await o.post(CONTACTS, { name: 'Mine', email: 'theirs@example.com' });

    expectDeskError(get, 404, 'NOT_FOUND');
    expectDeskError(patch, 404, 'NOT_FOUND');
    expectDeskError(del, 404, 'NOT_FOUND');
    expect(byEmail.body).toEqual({ success: true, data: null });
    expect(listed.body.meta.total).toBe(0);
    expect(same.status).toBe(201);
    expect(await getContact(d, theirs.id)).toEqual(theirs);
  });

  it("refuses linking to another account's organization (422) on create and update", async () => {
    const { d } = await setup();
    const other = await createTestAccount();
    const foreignOrg = await newOrg(as(client, other.ownerKey), { name: 'Foreign', organizationalDomain: 'foreign.example' });
    const c = await newContact(d, { name: 'Local', email: 'local@example.com' });

    const create = await d.post(CONTACTS, { name: 'X', email: 'x@example.com', organizationId: foreignOrg.id });
    const update = await d.patch(`${CONTACTS}/${c.id}`, { organizationId: foreignOrg.id });

    expectValidation(create, 'organizationId');
    expectValidation(update, 'organizationId');
  });
});

describe('organizationName and ticketCount', () => {
  it("organizationName follows the organization's rename", async () => {
    const { d } = await setup();
    const org = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });
    const c = await newContact(d, { name: 'Wile', email: 'wile@acme.example' });

    must(await d.patch(`${ORGS}/${org.id}`, { name: 'Acme Corporation' }), 200, 'rename');

    expect((await getContact(d, c.id)).organizationName).toBe('Acme Corporation');
    expect((await list(d, `organization_id=${org.id}`)).data[0].organizationName).toBe('Acme Corporation');
    expect((await contactByEmail(d, 'wile@acme.example')).organizationName).toBe('Acme Corporation');
  });

  it('creating a ticket for an unknown requester creates the contact from requesterEmail and requesterName', async () => {
    const { d } = await setup();
    const org = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });

    await newTicket(d, { requesterEmail: 'road@acme.example', requesterName: 'Road Runner' });
    await newTicket(d, { requesterEmail: 'solo@free.example', requesterName: 'Solo' });

    expect(await contactByEmail(d, 'road@acme.example')).toMatchObject({
      name: 'Road Runner',
      email: 'road@acme.example',
      organizationId: org.id,
      organizationName: 'Acme',
      ticketCount: 1,
      notes: null,
    });
    expect(await contactByEmail(d, 'solo@free.example')).toMatchObject({ name: 'Solo', organizationId: null, ticketCount: 1 });
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('a second ticket of a known requester does not create another contact nor rename it', async () => {
    const { d } = await setup();
    const c = await newContact(d, { name: 'Known Name', email: 'known@example.com' });

    await newTicket(d, { requesterEmail: 'KNOWN@example.com', requesterName: 'Another Name' });

    expect((await list(d, '')).meta.total).toBe(1);
    expect(await getContact(d, c.id)).toMatchObject({ name: 'Known Name', email: 'known@example.com', ticketCount: 1 });
  });

  it('counts tickets by requesterEmail (any case), including tickets from before the contact and after a delete and recreate', async () => {
    const { d } = await setup();
    // Two tickets before any contact: the first creates it.
    await newTicket(d, { requesterEmail: 'pat@example.com', requesterName: 'Pat' });
    await newTicket(d, { requesterEmail: 'PAT@Example.com' });
    const auto = await contactByEmail(d, 'pat@example.com');
    expect(auto.ticketCount).toBe(2);

    must(await d.del(`${CONTACTS}/${auto.id}`), 204, 'delete contact');
    const recreated = await newContact(d, { name: 'Pat again', email: 'Pat@example.com' });
    expect(recreated.ticketCount).toBe(2);

    must(await d.del(`${CONTACTS}/${recreated.id}`), 204, 'delete contact');
    await newTicket(d, { requesterEmail: 'pat@example.com', requesterName: 'Pat third' });

    const third = await contactByEmail(d, 'pat@example.com');
    expect(third).toMatchObject({ name: 'Pat third', ticketCount: 3 });
    expect(third.id).not.toBe(recreated.id);
  });

  it("changing a ticket's requesterEmail moves the count, and deleting the ticket decrements it", async () => {
    const { d } = await setup();
    const a = await newContact(d, { name: 'A', email: 'a@example.com' });
    const b = await newContact(d, { name: 'B', email: 'b@example.com' });
    const t1 = await newTicket(d, { requesterEmail: 'a@example.com' });
    await newTicket(d, { requesterEmail: 'a@example.com' });
    expect((await getContact(d, a.id)).ticketCount).toBe(2);

    must(await d.put(`${TICKETS}/${t1.id}`, { ticket: { requesterEmail: 'B@example.com' } }), 200, 'move ticket');
    const afterMove = [(await getContact(d, a.id)).ticketCount, (await getContact(d, b.id)).ticketCount];
    must(await d.put(`${TICKETS}/${t1.id}`, { ticket: { requesterEmail: 'new.person@example.com', requesterName: 'New Person' } }), 200, 'move to unknown');
    const afterUnknown = [(await getContact(d, a.id)).ticketCount, (await getContact(d, b.id)).ticketCount, await contactByEmail(d, 'new.person@example.com')];
    must(await d.del(`${TICKETS}/${t1.id}`), 204, 'delete ticket');

    expect(afterMove).toEqual([1, 1]);
    expect(afterUnknown[0]).toBe(1);
    expect(afterUnknown[1]).toBe(0);
    expect(afterUnknown[2]).toMatchObject({ name: 'New Person', ticketCount: 1 });
    expect((await contactByEmail(d, 'new.person@example.com')).ticketCount).toBe(0);
    expect((await getContact(d, a.id)).ticketCount).toBe(1);
  });

  it("changing a contact's email makes its ticketCount follow the new email", async () => {
    const { d } = await setup();
    const c = await newContact(d, { name: 'C', email: 'old@example.com' });
    await newTicket(d, { requesterEmail: 'old@example.com' });
    await newTicket(d, { requesterEmail: 'other@example.com' });
    await newTicket(d, { requesterEmail: 'other@example.com' });
    must(await d.del(`${CONTACTS}/${(await contactByEmail(d, 'other@example.com')).id}`), 204, 'free other@');

    const res = await d.patch(`${CONTACTS}/${c.id}`, { email: 'other@example.com' });

    expect(res.status).toBe(200);
    expect(res.body.data.ticketCount).toBe(2);
    expect((await getContact(d, c.id)).ticketCount).toBe(2);
  });

  it('stays exact when many tickets for one contact are created and deleted in parallel', async () => {
    const { d } = await setup();
    const c = await newContact(d, { name: 'Busy', email: 'busy@example.com' });

    const tickets = await Promise.all(Array.from({ length: 12 }, (_, i) => d.post(TICKETS, { ticket: { subject: `p${i}`, requesterEmail: 'busy@example.com' } })));
    const afterCreate = (await getContact(d, c.id)).ticketCount;
    const deletes = await Promise.all(tickets.slice(0, 5).map((t) => d.del(`${TICKETS}/${t.body.ticket.id}`)));

    expect(tickets.map((t) => t.status)).toEqual(Array(12).fill(201));
    expect(afterCreate).toBe(12);
    expect(deletes.map((r) => r.status)).toEqual(Array(5).fill(204));
    expect((await getContact(d, c.id)).ticketCount).toBe(7);
  });
});
