import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, CONTACTS, expectBadQuery, must, newContact, newOrg, ORGS, type Api, type Json } from '../support/helpdesk.ts';
import { contactRecord, storeContacts } from '../support/store.ts';
import { useStoreProxy } from '../support/store-proxy.ts';
import { USERS, walkUsers } from '../support/users.ts';

/**
 * Search by word prefix through the word index (decisions §13): what matches,
 * and that the work a search does stays flat while the account grows 30×.
 * Work is counted on the wire (items the store read, requests), never timed.
 */
const store = useStoreProxy({ consumedCapacity: true });
const { client } = useGateway();

const names = (items: Json[]) => items.map((c) => c.name).sort();
const list = async (d: Api, path: string) => must(await d.get(path), 200, `GET ${path}`);

describe('search matches word prefixes (decisions §13)', () => {
  let d: Api;
  beforeAll(async () => {
    const acct = await createTestAccount();
    d = as(client, acct.ownerKey);
    await newContact(d, { name: 'John Smith', email: 'jsmith@mail.example' });
    await newContact(d, { name: 'José Álvarez', email: 'jose@correo.example' });
    await newContact(d, { name: 'Ops Team', email: 'ops@acme.example' });
    await newContact(d, { name: 'Mary-Jane Watson', email: 'mj+news@daily-bugle.example' });
    await newOrg(d, { name: 'Acme Rockets', organizationalDomain: 'acme-rockets.example' });
    await newOrg(d, { name: 'Globex', organizationalDomain: 'globex.example' });
  });

  it.each([
    ['jo', ['John Smith', 'José Álvarez']],
    ['smi', ['John Smith']],
    ['jo smi', ['John Smith']],
    ['JOSE', ['José Álvarez']],
    ['álv', ['José Álvarez']],
    ['acme', ['Ops Team']],
    ['ops@ac', ['Ops Team']],
    ['ops@acme.example', ['Ops Team']],
    ['jane', ['Mary-Jane Watson']],
    ['news', ['Mary-Jane Watson']],
    ['bugle', ['Mary-Jane Watson']],
    ['ohn', []],
    ['john jose', []],
  ])('contacts: %j finds %j', async (search, expected) => {
    const body = await list(d, `${CONTACTS}?search=${encodeURIComponent(search)}`);
    expect(names(body.data)).toEqual(expected);
    expect(body.meta.total).toBe(expected.length);
  });

  it.each([
    ['acme', ['Acme Rockets']],
    ['rockets', ['Acme Rockets']],
    ['acme-ro', ['Acme Rockets']],
    ['glob', ['Globex']],
    ['lobex', []],
  ])('organizations: %j finds %j', async (search, expected) => {
    const body = await list(d, `${ORGS}?search=${encodeURIComponent(search)}`);
    expect(names(body.data)).toEqual(expected);
  });

  it('follows the requested sort and order, with pages and totals', async () => {
    const asc = await list(d, `${CONTACTS}?search=example&sort_by=name&sort_order=asc&limit=3`);
    expect(asc.data.map((c: Json) => c.name)).toEqual(['John Smith', 'José Álvarez', 'Mary-Jane Watson']);
    expect(asc.meta).toMatchObject({ page: 1, limit: 3, total: 4, totalPages: 2 });
    const second = await list(d, `${CONTACTS}?search=example&sort_by=name&sort_order=asc&limit=3&page=2`);
    expect(second.data.map((c: Json) => c.name)).toEqual(['Ops Team']);
    const byEmailDesc = await list(d, `${CONTACTS}?search=example&sort_by=email&sort_order=desc&limit=2`);
    expect(byEmailDesc.data.map((c: Json) => c.email)).toEqual(['ops@acme.example', 'mj+news@daily-bugle.example']);
    const beyond = await list(d, `${CONTACTS}?search=example&sort_by=name&limit=2&page=9`);
    expect(beyond.data).toEqual([]);
    expect(beyond.meta).toMatchObject({ page: 9, total: 4 });
  });

  it('a blank search is no filter; a term over 64 characters is refused naming search', async () => {
    const all = await list(d, `${CONTACTS}?search=${encodeURIComponent('   ')}`);
    expect(all.meta.total).toBe(4);
    expectBadQuery(await d.get(`${CONTACTS}?search=${'x'.repeat(65)}`), 'search');
  });

  it('follows a rename: the old words stop matching, the new ones match', async () => {
    const c = await newContact(d, { name: 'Temporary Name', email: 'temp@rename.example' });
    must(await d.patch(`${CONTACTS}/${c.id}`, { name: 'Permanent Label' }), 200, 'rename');
    expect(names((await list(d, `${CONTACTS}?search=tempor`)).data)).toEqual([]);
    expect(names((await list(d, `${CONTACTS}?search=perm lab`)).data)).toEqual(['Permanent Label']);
    must(await d.del(`${CONTACTS}/${c.id}`), 204, 'delete');
    expect((await list(d, `${CONTACTS}?search=perm`)).data).toEqual([]);
  });
});

/**
 * Store contacts `from` to `from + n - 1` straight into the table, 10 ms apart from a day ago (thousands of API calls
 * would dominate the run). Writing them is most of this file's time, so each has the fewest items a contact can: with
 * its guard, 2 search words (`<i>@filler.filler` and `filler.filler`; every other word of "Filler <i>" and its
 * address begins one of those, so is not stored). "Filler Person <i>", `filler<i>@bulk.example` stored 5.
 */
async function seedContacts(acct: TestAccount, n: number, from: number) {
  const at = (i: number) => new Date(Date.now() - 86_400_000 + i * 10);
  await storeContacts(Array.from({ length: n }, (_, k) => from + k).map((i) => contactRecord(acct.accountId, at(i), { name: `Filler ${i}`, email: `${i}@filler.filler` })));
}

describe('search work does not grow with the account', () => {
  it('from 100 to 3,000 contacts: the oldest match is found in the first request, with the same items read and requests', async () => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const oldest = await newContact(d, { name: 'Zebulon Oldest', email: 'zeb@first.example' });
    await seedContacts(acct, 99, 0);
    const measure = async () => {
      // A call first, not counted: the gateway's bookkeeping for the key (its authorizer cache, its use recorded once
      // an hour) is then the same for both counted calls, even when the seeding between them crosses the hour (CI did).
      await list(d, `${CONTACTS}?search=zebu&sort_by=created_at`);
      await store.reset();
      const body = await list(d, `${CONTACTS}?search=zebu&sort_by=created_at`);
      const work = await store.reset();
      expect(body.data.map((c: Json) => c.id)).toEqual([oldest.id]);
      expect(body.meta.total).toBe(1);
      return work;
    };
    const small = await measure();
    await seedContacts(acct, 2_900, 99);
    const large = await measure();
    // The gateway's own bookkeeping (authorizer, rate limit) goes through the store too: compare the whole request.
    expect(large.itemsRead).toBeLessThanOrEqual(small.itemsRead);
    expect(large.requests).toBe(small.requests);
    expect(large.byCommand.Query ?? 0).toBe(small.byCommand.Query ?? 0);
    // A term matching every contact still answers one page, with an exact total.
    const broad = await list(d, `${CONTACTS}?search=filler&sort_by=name&limit=5`);
    expect(broad.data).toHaveLength(5);
    expect(broad.meta.total).toBe(2_999);
  }, 180_000);
});

describe('users: search with role filter and cursor pages', () => {
  it('matches word prefixes, combines with role and status, and pages with the cursor over the exact total', async () => {
    const acct = await createTestAccount();
    const create = async (name: string, email: string, role: string) =>
      must(await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name, role, send_invitation: false } }), 201, `create ${name}`);
    await create('Jonas Berg', 'jonas@berg.example', 'member');
    await create('Joan Smith', 'joan@smith.example', 'admin');
    await create('Johanna Lind', 'jlind@lind.example', 'member');
    await create('Peter Jolly', 'peter@jolly.example', 'viewer');
    const get = async (q: string) => must(await client.request('GET', `${USERS}?${q}`, { token: acct.ownerKey }), 200, q);
    const jo = await get('search=jo&sort=name&order=asc&limit=2');
    expect(jo.data.map((u: Json) => u.name)).toEqual(['Joan Smith', 'Johanna Lind']);
    expect(jo.pagination).toMatchObject({ has_more: true, total_count: 4 });
    const walked = (await walkUsers(client, acct.ownerKey, 'search=jo&sort=name&order=asc&limit=2')).users;
    expect(walked.map((u) => u.name)).toEqual(['Joan Smith', 'Johanna Lind', 'Jonas Berg', 'Peter Jolly']);
    const members = await get('search=jo&role=member&sort=email&order=desc');
    expect(members.data.map((u: Json) => u.name)).toEqual(['Jonas Berg', 'Johanna Lind']);
    expect(members.pagination).toMatchObject({ has_more: false, total_count: 2, next_cursor: null });
    expect((await get('search=smith.ex')).data.map((u: Json) => u.name)).toEqual(['Joan Smith']);
  });
});

describe('admin reindex', () => {
  it('indexes records written before the word index, idempotently', async () => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const legacy = contactRecord(acct.accountId, new Date(), { name: 'Legacy Lenora', email: 'lenora@old.example' });
    // As an older version stored it: the contact and its guard, no words.
    await storeContacts([legacy], { words: false });
    expect((await list(d, `${CONTACTS}?search=lenora`)).data).toEqual([]);
    const { reindexAccount } = await import('#shared/reindex/service.ts');
    expect((await reindexAccount(acct.accountId)).contacts).toBe(1);
    await reindexAccount(acct.accountId);
    const found = await list(d, `${CONTACTS}?search=lenora`);
    expect(found.data.map((c: Json) => c.id)).toEqual([legacy.id]);
    expect(found.meta.total).toBe(1);
  });
});
