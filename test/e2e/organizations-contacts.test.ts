/**
 * Organizations and their contacts: what an update or a delete does to them,
 * who may make those changes, auto-linking of contacts by email domain, and
 * the contact and ticket counts kept exact through every change.
 */
import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import {
  as,
  CONTACTS,
  contactByEmail,
  counts,
  expectDeskError,
  expectValidation,
  getContact,
  getOrg,
  inBatches,
  must,
  newContact,
  newOrg,
  newTicket,
  ORGS,
  storedContact,
  TICKETS,
  walkPages,
} from '../support/helpdesk.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

describe('organization update, delete, permissions', () => {
  it('PATCH changes only the given fields; a new domain is lowercased and frees the old one', async () => {
    const { d } = await setup();
    const o = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });

    const renamed = await d.patch(`${ORGS}/${o.id}`, { name: 'Acme Corp' });
    const hand = await d.patch(`${ORGS}/${o.id}`, { country: 'Atlantis', industry: 'Anvils' });
    const moved = await d.patch(`${ORGS}/${o.id}`, { organizationalDomain: 'ACME-Corp.example' });
    const badDomain = await d.patch(`${ORGS}/${o.id}`, { organizationalDomain: 'https://acme.example' });
    const reuseOld = await d.post(ORGS, { organizationalDomain: 'acme.example' });

    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toEqual({ ...o, name: 'Acme Corp' });
    expect(hand.body.data).toEqual({ ...o, name: 'Acme Corp', country: 'Atlantis', industry: 'Anvils' });
    expect(moved.body.data).toEqual({ ...o, name: 'Acme Corp', country: 'Atlantis', industry: 'Anvils', organizationalDomain: 'acme-corp.example' });
    expectValidation(badDomain, 'organizationalDomain');
    expect(reuseOld.status).toBe(201);
    expect(await getOrg(d, o.id)).toEqual(moved.body.data);
  });

  it('after a domain change, new contacts of the new domain are linked, and of the old domain are not', async () => {
    const { d } = await setup();
    const o = await newOrg(d, { name: 'Acme', organizationalDomain: 'old.example' });
    must(await d.patch(`${ORGS}/${o.id}`, { organizationalDomain: 'new.example' }), 200, 'change domain');

    const onNew = await newContact(d, { name: 'New', email: 'n@new.example' });
    const onOld = await newContact(d, { name: 'Old', email: 'o@old.example' });

    expect(onNew.organizationId).toBe(o.id);
    expect(onOld.organizationId).toBeNull();
  });

  it('DELETE answers 204; every one of 60 linked contacts gets organizationId null and keeps its tickets', async () => {
    const { d, acct } = await setup();
    const o = await newOrg(d, { name: 'Big', organizationalDomain: 'big.example' });
    const contacts = await inBatches(60, 10, (i) => newContact(d, { name: `P${i}`, email: `p${i}@big.example` }));
    await newTicket(d, { requesterEmail: 'p0@big.example' });
    expect(await counts(d, o.id)).toEqual({ contactCount: 60, ticketCount: 1 });

    const res = await d.del(`${ORGS}/${o.id}`);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectDeskError(await d.get(`${ORGS}/${o.id}`), 404, 'NOT_FOUND');
    expect((await d.get(`${CONTACTS}?organization_id=${o.id}`)).body.meta.total).toBe(0);
    const listed = await walkPages(d, CONTACTS, { search: 'big.example', limit: 100 }, 60);
    expect(listed.every((c) => c.organizationId === null && c.organizationName === null)).toBe(true);
    // Stored records, not only the rendering, are unlinked.
    const stored = await Promise.all(contacts.map((c) => storedContact(acct.accountId, c.id)));
    expect(stored.filter((c) => c.organizationId !== null).map((c) => c.email)).toEqual([]);
    expect((await contactByEmail(d, 'p0@big.example')).ticketCount).toBe(1);
    // The domain is free again, and an old contact does not count for the new organization.
    const again = await newOrg(d, { name: 'Big again', organizationalDomain: 'big.example' });
    expect(await counts(d, again.id)).toEqual({ contactCount: 0, ticketCount: 0 });
    expect((await getContact(d, contacts[0].id)).organizationId).toBeNull();
  });

  it('DELETE of an unknown organization is 404', async () => {
    const { d } = await setup();

    expectDeskError(await d.del(`${ORGS}/org_doesnotexist`), 404, 'NOT_FOUND');
  });

  it('a viewer reads organizations but create, update, delete and enrich are 403 FORBIDDEN; a member may write', async () => {
    const { d, acct } = await setup();
    const o = await newOrg(d, { name: 'Kept', organizationalDomain: 'kept.example' });
    const viewer = as(client, (await acct.addUser('viewer')).key);
    const member = as(client, (await acct.addUser('member')).key);

    const reads = [await viewer.get(ORGS), await viewer.get(`${ORGS}/${o.id}`)];
    expectDeskError(await viewer.post(ORGS, { organizationalDomain: 'viewer.example' }), 403, 'FORBIDDEN');
    expectDeskError(await viewer.patch(`${ORGS}/${o.id}`, { name: 'Changed' }), 403, 'FORBIDDEN');
    expectDeskError(await viewer.del(`${ORGS}/${o.id}`), 403, 'FORBIDDEN');
    expectDeskError(await viewer.post(`${ORGS}/${o.id}/enrich`, {}), 403, 'FORBIDDEN');
    const created = await member.post(ORGS, { organizationalDomain: 'member.example' });
    const patched = await member.patch(`${ORGS}/${o.id}`, { name: 'By member' });
    const deleted = await member.del(`${ORGS}/${created.body.data.id}`);

    expect(reads.map((r) => r.status)).toEqual([200, 200]);
    expect(created.status).toBe(201);
    expect(patched.body.data.name).toBe('By member');
    expect(deleted.status).toBe(204);
  });

  it("another account's organization is 404 NOT_FOUND for read, update, delete and enrich, and not listed", async () => {
    const { d } = await setup();
    const o = await newOrg(d, { name: 'Theirs', organizationalDomain: 'theirs.example' });
    const other = as(client, (await createTestAccount()).ownerKey);

    expectDeskError(await other.get(`${ORGS}/${o.id}`), 404, 'NOT_FOUND');
    expectDeskError(await other.patch(`${ORGS}/${o.id}`, { name: 'Hijacked' }), 404, 'NOT_FOUND');
    expectDeskError(await other.del(`${ORGS}/${o.id}`), 404, 'NOT_FOUND');
    expectDeskError(await other.post(`${ORGS}/${o.id}/enrich`, {}), 404, 'NOT_FOUND');
    expect((await other.get(`${ORGS}?search=theirs`)).body.meta.total).toBe(0);
    expect(await getOrg(d, o.id)).toEqual(o);
  });
});

describe('auto-linking of contacts by email domain', () => {
  it('links a new contact whose email domain (any case) is an organization domain', async () => {
    const { d } = await setup();
    const o = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });

    const c = await newContact(d, { name: 'Bob', email: 'Bob@ACME.Example' });

    expect(c).toMatchObject({ organizationId: o.id, organizationName: 'Acme' });
    expect(await counts(d, o.id)).toEqual({ contactCount: 1, ticketCount: 0 });
  });

  it('does not link a contact of a different domain or of a subdomain', async () => {
    const { d } = await setup();
    const o = await newOrg(d, { organizationalDomain: 'acme.example' });

    const other = await newContact(d, { name: 'Other', email: 'x@acme.example.org' });
    const sub = await newContact(d, { name: 'Sub', email: 'y@eu.acme.example' });

    expect(other.organizationId).toBeNull();
    expect(sub.organizationId).toBeNull();
    expect(await counts(d, o.id)).toEqual({ contactCount: 0, ticketCount: 0 });
  });

  it('an explicit organizationId wins over the domain, and null keeps the contact unlinked', async () => {
    const { d } = await setup();
    await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });
    const chosen = await newOrg(d, { name: 'Chosen', organizationalDomain: 'chosen.example' });

    const explicit = await newContact(d, { name: 'E', email: 'e@acme.example', organizationId: chosen.id });
    const none = await newContact(d, { name: 'N', email: 'n@acme.example', organizationId: null });

    expect(explicit.organizationId).toBe(chosen.id);
    expect(none.organizationId).toBeNull();
  });

  it('never links free-mail contacts, even to an organization with that domain (POST and ticket-created contacts)', async () => {
    const { d } = await setup();
    const gmail = await newOrg(d, { name: 'Google Mail', organizationalDomain: 'gmail.com' });
    const outlook = await newOrg(d, { organizationalDomain: 'Outlook.com' });

    const viaPost = await newContact(d, { name: 'Gina', email: 'gina@gmail.com' });
    await newTicket(d, { requesterEmail: 'otto@outlook.com', requesterName: 'Otto' });

    expect(viaPost.organizationId).toBeNull();
    expect((await contactByEmail(d, 'otto@outlook.com')).organizationId).toBeNull();
    expect(await counts(d, gmail.id)).toEqual({ contactCount: 0, ticketCount: 0 });
    expect(await counts(d, outlook.id)).toEqual({ contactCount: 0, ticketCount: 0 });
  });
});

describe('contactCount and ticketCount stay exact', () => {
  it('through ticket-created contacts, moves between organizations, unlinking and requester changes', async () => {
    const { d } = await setup();
    const a = await newOrg(d, { name: 'A', organizationalDomain: 'a.example' });
    const b = await newOrg(d, { name: 'B', organizationalDomain: 'b.example' });

    await newTicket(d, { requesterEmail: 'x@a.example', requesterName: 'X' });
    await newTicket(d, { requesterEmail: 'X@A.example' });
    const x = await contactByEmail(d, 'x@a.example');
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 2 });

    const y = await newContact(d, { name: 'Y', email: 'y@b.example' });
    const ty = await newTicket(d, { requesterEmail: 'y@b.example' });
    expect(await counts(d, b.id)).toEqual({ contactCount: 1, ticketCount: 1 });

    must(await d.patch(`${CONTACTS}/${x.id}`, { organizationId: b.id }), 200, 'move x to B');
    expect(await counts(d, a.id)).toEqual({ contactCount: 0, ticketCount: 0 });
    expect(await counts(d, b.id)).toEqual({ contactCount: 2, ticketCount: 3 });

    must(await d.patch(`${CONTACTS}/${x.id}`, { organizationId: null }), 200, 'unlink x');
    expect(await counts(d, b.id)).toEqual({ contactCount: 1, ticketCount: 1 });

    must(await d.patch(`${CONTACTS}/${x.id}`, { organizationId: a.id }), 200, 'x back to A');
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 2 });

    // Ticket of y moves to requester x: from B to A.
    must(await d.put(`${TICKETS}/${ty.id}`, { ticket: { requesterEmail: 'x@a.example' } }), 200, 'requester change');
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 3 });
    expect(await counts(d, b.id)).toEqual({ contactCount: 1, ticketCount: 0 });
    expect((await getContact(d, y.id)).ticketCount).toBe(0);
  });

  it("through a contact's email change, contact deletes and ticket deletes", async () => {
    const { d } = await setup();
    const a = await newOrg(d, { name: 'A', organizationalDomain: 'a.example' });
    const x = await newContact(d, { name: 'X', email: 'x@a.example' });
    const t1 = await newTicket(d, { requesterEmail: 'x@a.example' });
    await newTicket(d, { requesterEmail: 'x@a.example' });
    await newTicket(d, { requesterEmail: 'x@a.example' });
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 3 });

    // x takes an email with no tickets: the organization keeps the contact, loses its three tickets.
    must(await d.patch(`${CONTACTS}/${x.id}`, { email: 'x2@a.example' }), 200, 'email change');
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 0 });

    // A new ticket for the old email creates a contact that brings all four tickets.
    await newTicket(d, { requesterEmail: 'x@a.example', requesterName: 'X old' });
    expect(await counts(d, a.id)).toEqual({ contactCount: 2, ticketCount: 4 });

    must(await d.del(`${TICKETS}/${t1.id}`), 204, 'delete ticket');
    expect(await counts(d, a.id)).toEqual({ contactCount: 2, ticketCount: 3 });

    const old = await contactByEmail(d, 'x@a.example');
    must(await d.del(`${CONTACTS}/${old.id}`), 204, 'delete contact');
    expect(await counts(d, a.id)).toEqual({ contactCount: 1, ticketCount: 0 });

    // Recreated, the contact brings its remaining tickets back.
    await newContact(d, { name: 'X again', email: 'x@a.example' });
    expect(await counts(d, a.id)).toEqual({ contactCount: 2, ticketCount: 3 });
  });

  it('under parallel moves of contacts between organizations and parallel tickets', async () => {
    const { d } = await setup();
    const a = await newOrg(d, { name: 'A', organizationalDomain: 'pa.example' });
    const b = await newOrg(d, { name: 'B', organizationalDomain: 'pb.example' });
    const people = await inBatches(10, 10, (i) => newContact(d, { name: `P${i}`, email: `p${i}@pa.example` }));

    const [moves, tickets] = await Promise.all([
      Promise.all(people.slice(0, 6).map((p) => d.patch(`${CONTACTS}/${p.id}`, { organizationId: b.id }))),
      Promise.all(people.map((p, i) => d.post(TICKETS, { ticket: { subject: `t${i}`, requesterEmail: p.email } }))),
    ]);

    expect(moves.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(tickets.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(await counts(d, a.id)).toEqual({ contactCount: 4, ticketCount: 4 });
    expect(await counts(d, b.id)).toEqual({ contactCount: 6, ticketCount: 6 });
  });
});
