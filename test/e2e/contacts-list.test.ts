/** GET /contacts: search, filter by organization, sort and pages. */
import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, CONTACTS, expectBadQuery, inBatches, must, newContact, newOrg, walkPages, type Json } from '../support/helpdesk.ts';

const { client } = useGateway();

async function setup() {
  const acct = await createTestAccount();
  return { acct, d: as(client, acct.ownerKey) };
}

const names = (items: Json[]) => items.map((c) => c.name);
const list = async (d: ReturnType<typeof as>, query: string) => must(await d.get(`${CONTACTS}?${query}`), 200, `list ${query}`);

describe('GET /contacts: search, filter, sort, pages', () => {
  it('search matches name or email, case-insensitively, and meta counts only the matches', async () => {
    const { d } = await setup();
    await newContact(d, { name: 'Alice Smith', email: 'alice@one.example' });
    await newContact(d, { name: 'Bob Jones', email: 'bob@two.example' });
    await newContact(d, { name: 'Carol SMITHERS', email: 'carol@three.example' });
    await newContact(d, { name: 'Dan', email: 'Dan.Smith@four.example' });

    const bySmith = await list(d, 'search=sMiTh&sort_by=name&sort_order=asc');
    const byDomain = await list(d, 'search=TWO.EXAMPLE');
    const none = await list(d, 'search=zebra');

    expect(names(bySmith.data)).toEqual(['Alice Smith', 'Carol SMITHERS', 'Dan']);
    expect(bySmith.meta).toEqual({ page: 1, limit: 15, total: 3, totalPages: 1 });
    expect(names(byDomain.data)).toEqual(['Bob Jones']);
    expect(none).toEqual({ success: true, data: [], meta: { page: 1, limit: 15, total: 0, totalPages: 0 } });
  });

  it('sorts by name, email and created_at in both directions (name and email case-insensitively), default created_at desc', async () => {
    const { d } = await setup();
    // Created in this order; names and emails are ordered differently from creation and from each other.
    const made = [];
    for (const [name, email] of [
      ['carol', 'zed@example.com'],
      ['Alice', 'Yann@example.com'],
      ['dave', 'xavier@example.com'],
      ['Bob', 'walt@example.com'],
    ])
      made.push(await newContact(d, { name, email }));

    const byName = { asc: await list(d, 'sort_by=name&sort_order=asc'), desc: await list(d, 'sort_by=name&sort_order=desc') };
    const byEmail = { asc: await list(d, 'sort_by=email&sort_order=asc'), desc: await list(d, 'sort_by=email&sort_order=desc') };
    const byCreated = { asc: await list(d, 'sort_by=created_at&sort_order=asc'), desc: await list(d, 'sort_by=created_at&sort_order=desc') };
    const byDefault = await list(d, '');

    expect(names(byName.asc.data)).toEqual(['Alice', 'Bob', 'carol', 'dave']);
    expect(names(byName.desc.data)).toEqual(['dave', 'carol', 'Bob', 'Alice']);
    expect(byEmail.asc.data.map((c: Json) => c.email)).toEqual(['walt@example.com', 'xavier@example.com', 'Yann@example.com', 'zed@example.com']);
    expect(byEmail.desc.data.map((c: Json) => c.email)).toEqual(['zed@example.com', 'Yann@example.com', 'xavier@example.com', 'walt@example.com']);
    expect(names(byCreated.asc.data)).toEqual(['carol', 'Alice', 'dave', 'Bob']);
    expect(names(byCreated.desc.data)).toEqual(['Bob', 'dave', 'Alice', 'carol']);
    expect(names(byDefault.data)).toEqual(['Bob', 'dave', 'Alice', 'carol']);
  });

  it('walks every page with exact meta, each contact exactly once, in the requested order', async () => {
    const { d } = await setup();
    const emails = Array.from({ length: 23 }, (_, i) => `p${String(i).padStart(2, '0')}@walk.example`);
    await inBatches(emails.length, 8, (i) => newContact(d, { name: `Person ${i}`, email: emails[i] }));

    const asc = await walkPages(d, CONTACTS, { sort_by: 'email', sort_order: 'asc', limit: 10 }, 23);
    const desc = await walkPages(d, CONTACTS, { sort_by: 'email', sort_order: 'desc', limit: 7 }, 23);
    const byCreated = await walkPages(d, CONTACTS, { limit: 5 }, 23);
    const beyond = await list(d, 'limit=10&page=4');

    expect(asc.map((c) => c.email)).toEqual(emails);
    expect(desc.map((c) => c.email)).toEqual([...emails].reverse());
    expect(new Set(byCreated.map((c) => c.id)).size).toBe(23);
    expect(beyond).toEqual({ success: true, data: [], meta: { page: 4, limit: 10, total: 23, totalPages: 3 } });
  });

  it('combines search with pages: meta.total and totalPages count the matches only', async () => {
    const { d } = await setup();
    await inBatches(12, 6, (i) => newContact(d, { name: `${i % 2 ? 'Match' : 'Other'} ${String(i).padStart(2, '0')}`, email: `c${i}@combo.example` }));

    const matches = await walkPages(d, CONTACTS, { search: 'match', sort_by: 'name', sort_order: 'asc', limit: 4 }, 6);

    expect(names(matches)).toEqual(['Match 01', 'Match 03', 'Match 05', 'Match 07', 'Match 09', 'Match 11']);
  });

  it('organization_id filters to the contacts linked to that organization, sorted and paged', async () => {
    const { d } = await setup();
    const acme = await newOrg(d, { name: 'Acme', organizationalDomain: 'acme.example' });
    await newOrg(d, { name: 'Globex', organizationalDomain: 'globex.example' });
    for (const n of ['Zoe', 'ann', 'Mia']) await newContact(d, { name: n, email: `${n.toLowerCase()}@acme.example` });
    await newContact(d, { name: 'Gus', email: 'gus@globex.example' });
    await newContact(d, { name: 'Free', email: 'free@nowhere.example' });

    const asc = await list(d, `organization_id=${acme.id}&sort_by=name&sort_order=asc`);
    const page2 = await list(d, `organization_id=${acme.id}&sort_by=name&sort_order=desc&limit=2&page=2`);
    const created = await list(d, `organization_id=${acme.id}&sort_by=created_at&sort_order=asc`);
    const unknownOrg = await list(d, 'organization_id=org_doesnotexist');

    expect(names(asc.data)).toEqual(['ann', 'Mia', 'Zoe']);
    expect(asc.meta).toEqual({ page: 1, limit: 15, total: 3, totalPages: 1 });
    expect(names(page2.data)).toEqual(['ann']);
    expect(page2.meta).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
    expect(names(created.data)).toEqual(['Zoe', 'ann', 'Mia']);
    expect(unknownOrg.meta.total).toBe(0);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['limit=abc', 'limit'],
    ['sort_by=phone', 'sort_by'],
    ['sort_order=up', 'sort_order'],
  ])('refuses %s with 400 BAD_REQUEST naming the parameter', async (query, field) => {
    const { d } = await setup();

    const res = await d.get(`${CONTACTS}?${query}`);

    expectBadQuery(res, field);
  });

  it('accepts the limit bounds 1 and 100', async () => {
    const { d } = await setup();
    await newContact(d, { name: 'One', email: 'one@bounds.example' });
    await newContact(d, { name: 'Two', email: 'two@bounds.example' });

    const one = await list(d, 'limit=1');
    const hundred = await list(d, 'limit=100');

    expect(one.meta).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 });
    expect(one.data).toHaveLength(1);
    expect(hundred.meta).toEqual({ page: 1, limit: 100, total: 2, totalPages: 1 });
  });
});
