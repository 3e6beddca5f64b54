import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { setEnrichmentProvider } from '../support/lambda.ts';
import {
  as,
  CONTACTS,
  contactByEmail,
  counts,
  expectBadQuery,
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
  type Api,
  type Json,
} from '../support/helpdesk.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

const list = async (d: Api, query: string) => must(await d.get(`${ORGS}?${query}`), 200, `list ${query}`);
const domains = (items: Json[]) => items.map((o) => o.organizationalDomain);

describe('organization create and validation', () => {
  it('creates an organization: 201, domain stored lowercased, enrichment fields null, counts 0', async () => {
    const { d } = await setup();

    const res = await d.post(ORGS, { name: 'Acme', organizationalDomain: 'ACME.com' });

    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^org_/),
        name: 'Acme',
        organizationalDomain: 'acme.com',
        country: null,
        industry: null,
        employeeCount: null,
        yearlyRevenue: null,
        logoUrl: null,
        contactCount: 0,
        ticketCount: 0,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      },
    });
    expect(await getOrg(d, res.body.data.id)).toEqual(res.body.data);
  });

  it('name is optional (null)', async () => {
    const { d } = await setup();

    const res = await d.post(ORGS, { organizationalDomain: 'nameless.example' });

    expect(res.status).toBe(201);
    expect(res.body.data.name).toBeNull();
  });

  it.each(['http://acme.com', 'acme.com/x', 'a b.com', 'acme..com', '', '.acme.com', 'acme.com.', '-acme.com', 'acme_corp.com', 'user@acme.com', 'acme.com:8080'])(
    'refuses the domain %j with 422 VALIDATION_ERROR naming organizationalDomain',
    async (domain) => {
      const { d } = await setup();

      const res = await d.post(ORGS, { name: 'Bad', organizationalDomain: domain });

      expectValidation(res, 'organizationalDomain');
      expect((await list(d, '')).meta.total).toBe(0);
    },
  );

  it('refuses a missing or non-string domain with 422', async () => {
    const { d } = await setup();

    expectValidation(await d.post(ORGS, { name: 'No domain' }), 'organizationalDomain');
    expectValidation(await d.post(ORGS, { organizationalDomain: 42 }), 'organizationalDomain');
  });

  it('accepts name and domain of exactly 128 characters and refuses 129 or more with 422', async () => {
    const { d } = await setup();
    const domain128 = `${'a'.repeat(63)}.${'b'.repeat(60)}.com`;
    const domain131 = `${'a'.repeat(63)}.${'b'.repeat(63)}.com`;
    expect(domain128).toHaveLength(128);

    const okName = await d.post(ORGS, { name: 'n'.repeat(128), organizationalDomain: 'name128.example' });
    const okDomain = await d.post(ORGS, { organizationalDomain: domain128 });
    const longName = await d.post(ORGS, { name: 'n'.repeat(129), organizationalDomain: 'name129.example' });
    const longDomain = await d.post(ORGS, { organizationalDomain: domain131 });
    const patchLongName = await d.patch(`${ORGS}/${okName.body.data.id}`, { name: 'm'.repeat(129) });

    expect(okName.status).toBe(201);
    expect(okDomain.status).toBe(201);
    expectValidation(longName, 'name');
    expectValidation(longDomain, 'organizationalDomain');
    expectValidation(patchLongName, 'name');
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('refuses a duplicate domain, whatever its case, with 409 CONFLICT (create and update)', async () => {
    const { d } = await setup();
    await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.com' });
    const other = await newOrg(d, { name: 'Other', organizationalDomain: 'other.com' });

    const dupCreate = await d.post(ORGS, { name: 'Acme 2', organizationalDomain: 'ACME.COM' });
    const dupUpdate = await d.patch(`${ORGS}/${other.id}`, { organizationalDomain: 'Acme.com' });

    expectDeskError(dupCreate, 409, 'CONFLICT');
    expectDeskError(dupUpdate, 409, 'CONFLICT');
    expect((await getOrg(d, other.id)).organizationalDomain).toBe('other.com');
    expect((await list(d, '')).meta.total).toBe(2);
  });

  it('the same domain may exist in two accounts', async () => {
    const { d } = await setup();
    const other = await createTestAccount();
    await newOrg(d, { organizationalDomain: 'shared.example' });

    const res = await as(client, other.ownerKey).post(ORGS, { organizationalDomain: 'shared.example' });

    expect(res.status).toBe(201);
  });
});

describe('GET /organizations: search, sort, pages', () => {
  it('search matches name or domain, case-insensitively', async () => {
    const { d } = await setup();
    await newOrg(d, { name: 'Acme Rockets', organizationalDomain: 'acme.example' });
    await newOrg(d, { name: 'Globex', organizationalDomain: 'globex-rockets.example' });
    await newOrg(d, { name: 'Initech', organizationalDomain: 'initech.example' });

    const rockets = await list(d, 'search=ROCKETS&sort_by=name&sort_order=asc');
    const byDomain = await list(d, 'search=initech.EXAMPLE');

    expect(rockets.data.map((o: Json) => o.name)).toEqual(['Acme Rockets', 'Globex']);
    expect(rockets.meta).toEqual({ page: 1, limit: 15, total: 2, totalPages: 1 });
    expect(byDomain.data.map((o: Json) => o.name)).toEqual(['Initech']);
  });

  it('sorts by name, organizational_domain, created_at and contact_count, both directions (default created_at desc)', async () => {
    const { d } = await setup();
    // Creation order, names, domains and contact counts each give a different order.
    const specs = [
      { name: 'Delta', organizationalDomain: 'b-delta.example', contacts: 1 },
      { name: 'alpha', organizationalDomain: 'd-alpha.example', contacts: 3 },
      { name: 'Charlie', organizationalDomain: 'a-charlie.example', contacts: 0 },
      { name: 'bravo', organizationalDomain: 'c-bravo.example', contacts: 2 },
    ];
    for (const { contacts, ...o } of specs) {
      await newOrg(d, o);
      for (let i = 0; i < contacts; i++) await newContact(d, { name: `P${i}`, email: `p${i}@${o.organizationalDomain}` });
    }
    const nameOf = (items: Json[]) => items.map((o) => o.name);

    const results = Object.fromEntries(
      await Promise.all(
        ['name', 'organizational_domain', 'created_at', 'contact_count'].flatMap((s) =>
          ['asc', 'desc'].map(async (o) => [`${s} ${o}`, nameOf((await list(d, `sort_by=${s}&sort_order=${o}`)).data)] as const),
        ),
      ),
    );
    const byDefault = nameOf((await list(d, '')).data);

    expect(results['name asc']).toEqual(['alpha', 'bravo', 'Charlie', 'Delta']);
    expect(results['name desc']).toEqual(['Delta', 'Charlie', 'bravo', 'alpha']);
    expect(results['organizational_domain asc']).toEqual(['Charlie', 'Delta', 'bravo', 'alpha']);
    expect(results['organizational_domain desc']).toEqual(['alpha', 'bravo', 'Delta', 'Charlie']);
    expect(results['created_at asc']).toEqual(['Delta', 'alpha', 'Charlie', 'bravo']);
    expect(results['created_at desc']).toEqual(['bravo', 'Charlie', 'alpha', 'Delta']);
    expect(results['contact_count asc']).toEqual(['Charlie', 'Delta', 'bravo', 'alpha']);
    expect(results['contact_count desc']).toEqual(['alpha', 'bravo', 'Delta', 'Charlie']);
    expect(byDefault).toEqual(['bravo', 'Charlie', 'alpha', 'Delta']);
  });

  it('walks every page with exact meta, each organization once, in order; with search the meta counts matches only', async () => {
    const { d } = await setup();
    const all = Array.from({ length: 17 }, (_, i) => `org${String(i).padStart(2, '0')}.${i % 3 === 0 ? 'three' : 'walk'}.example`);
    await inBatches(all.length, 6, (i) => newOrg(d, { name: `Org ${i}`, organizationalDomain: all[i] }));

    const asc = await walkPages(d, ORGS, { sort_by: 'organizational_domain', sort_order: 'asc', limit: 5 }, 17);
    const desc = await walkPages(d, ORGS, { sort_by: 'organizational_domain', sort_order: 'desc', limit: 6 }, 17);
    const searched = await walkPages(d, ORGS, { search: 'three', sort_by: 'organizational_domain', sort_order: 'asc', limit: 2 }, 6);
    const byCount = await walkPages(d, ORGS, { sort_by: 'contact_count', limit: 4 }, 17);

    expect(domains(asc)).toEqual([...all].sort());
    expect(domains(desc)).toEqual([...all].sort().reverse());
    expect(domains(searched)).toEqual(all.filter((x) => x.includes('three')).sort());
    expect(new Set(byCount.map((o) => o.id)).size).toBe(17);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['page=0', 'page'],
    ['sort_by=contactCount', 'sort_by'],
    ['sort_order=sideways', 'sort_order'],
  ])('refuses %s with 400 BAD_REQUEST naming the parameter', async (query, field) => {
    const { d } = await setup();

    expectBadQuery(await d.get(`${ORGS}?${query}`), field);
  });
});

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

// A stand-in company-data API: /ok answers facts, /fail 500, /slow never answers (only the provider's timeout ends the call).
let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url?.startsWith('/ok')) {
      return res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ name: 'Remote Co', country: 'Norway', industry: 'Fjords', employeeCount: 42, yearlyRevenue: '1M NOK', logoUrl: 'https://remote.example/logo.png' }));
    }
    if (req.url?.startsWith('/fail')) return res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'Should not be used', country: 'Nowhere' }));
    // Anything else (/slow) gets no answer.
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

const enrich = (d: Api, id: string) => d.post(`${ORGS}/${id}/enrich`, {});
const NULL_FACTS = { country: null, industry: null, employeeCount: null, yearlyRevenue: null, logoUrl: null };

describe('POST /organizations/:id/enrich', () => {
  it('with the file provider fills every company field, and the name when unset', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { organizationalDomain: 'SAP.com' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      success: true,
      data: { ...o, name: 'SAP SE', country: 'Germany', industry: 'Enterprise Software', employeeCount: '107000', yearlyRevenue: '31.2B EUR', logoUrl: 'https://logo.clearbit.com/sap.com' },
    });
    expect(await getOrg(d, o.id)).toEqual(res.body.data);
  });

  it('keeps a hand-set name and hand-set company fields; a field the provider lacks stays null', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { name: 'Stripe (billing partner)', organizationalDomain: 'stripe.com' });
    must(await d.patch(`${ORGS}/${o.id}`, { industry: 'Payments' }), 200, 'hand-set industry');

    const res = await enrich(d, o.id);
    const again = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      name: 'Stripe (billing partner)',
      country: 'United States',
      industry: 'Payments',
      employeeCount: '8000',
      yearlyRevenue: null,
      logoUrl: 'https://logo.clearbit.com/stripe.com',
    });
    expect(again.body.data).toEqual(res.body.data);
  });

  it('with no provider, fields stay null and the call still answers 200', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'none' });
    const o = await newOrg(d, { organizationalDomain: 'apple.com' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: o });
  });

  it('with the file provider and an unknown domain, fields stay null and the call answers 200', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });
    const o = await newOrg(d, { organizationalDomain: 'unknown-company.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ...o, name: null, ...NULL_FACTS });
  });

  it('with an HTTP provider that answers, fills the fields (numbers as strings)', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}/ok`, ENRICHMENT_API_KEY: 'test-key', ENRICHMENT_TIMEOUT_MS: '1000' });
    const o = await newOrg(d, { organizationalDomain: 'remote.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Remote Co', country: 'Norway', industry: 'Fjords', employeeCount: '42', yearlyRevenue: '1M NOK', logoUrl: 'https://remote.example/logo.png' });
  });

  it.each([
    ['answers 500', '/fail'],
    ['times out', '/slow'],
  ])('with an HTTP provider that %s, the record is unchanged and the call answers 200', async (_what, path) => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: `${base}${path}`, ENRICHMENT_TIMEOUT_MS: '300' });
    const o = await newOrg(d, { organizationalDomain: 'broken.example' });

    const res = await enrich(d, o.id);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: o });
    expect(await getOrg(d, o.id)).toEqual(o);
  });

  it('of an unknown organization is 404', async () => {
    const { d } = await setup();
    await setEnrichmentProvider({ ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: 'data/companies.json' });

    expectDeskError(await enrich(d, 'org_doesnotexist'), 404, 'NOT_FOUND');
  });
});
