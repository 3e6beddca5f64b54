import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { expectUserError, USERS, walkUsers, type ListedUser } from '../support/users.ts';

const { client } = useGateway();

/**
 * 27 users created through the API in a fresh account (29 with the owner
 * and a viewer). Names repeat in other cases ("alpha Smith" / "Alpha Smith")
 * so the name order needs its tie-break;
 * "smith" hides in some names and some emails; two email domains.
 */
const PEOPLE = [
  'delta Jones',
  'Alpha Smith',
  'charlie Brown',
  'Bravo Green',
  'echo SMITH',
  'foxtrot White',
  'Golf Black',
  'hotel Grey',
  'India Smithers',
  'juliet Stone',
  'kilo Wood',
  'Lima Field',
  'mike Smith',
  'November Rain',
  'oscar Wilde',
  'papa Bear',
  'Quebec Town',
  'romeo Key',
  'sierra Hill',
  'Tango Dance',
  'uniform Blue',
  'victor Hugo',
  'alpha Smith',
  'Alpha Smith',
  'whiskey Sour',
  'Yankee Doodle',
  'zulu Time',
];
const ROLES = ['admin', 'member', 'viewer'] as const;

let acct: TestAccount;
let everyone: ListedUser[];
let viewerKey: string;

const roleOf = (i: number) => ROLES[i % 3];
const emailOf = (i: number, name: string) => `${name.split(' ')[0].toLowerCase()}.${i}@${i % 2 ? 'North' : 'south'}.example`;

beforeAll(async () => {
  acct = await createTestAccount();
  // Created one by one so creation order (and so created_at order) is known.
  for (const [i, name] of PEOPLE.entries()) {
    const email = i === 9 ? `smith.${i}@south.example` : emailOf(i, name);
    const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name, role: roleOf(i), send_invitation: false } });
    expect(res.status).toBe(201);
  }
  const all = await client.request('GET', `${USERS}?limit=100&sort=created_at&order=asc`, { token: acct.ownerKey });
  everyone = all.body.data;
  expect(everyone).toHaveLength(PEOPLE.length + 1);
  // Some users log in (active), some are suspended; the rest stay invited.
  for (const [i, u] of everyone.slice(1).entries()) {
    if (i % 4 === 1) await acct.session(u.id);
    if (i % 4 === 2) await client.request('PATCH', `${USERS}/${u.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
  }
  everyone = (await client.request('GET', `${USERS}?limit=100&sort=created_at&order=asc`, { token: acct.ownerKey })).body.data;
  viewerKey = (await acct.addUser('viewer', 'zz.reader@west.example')).key;
  everyone = (await client.request('GET', `${USERS}?limit=100&sort=created_at&order=asc`, { token: acct.ownerKey })).body.data;
}, 60_000);

type SortField = 'created_at' | 'name' | 'email';
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
/** The documented order: the sort field (name and email case-insensitively), ties by id. */
const KEY: Record<SortField, (u: ListedUser) => string> = {
  created_at: (u) => u.created_at,
  name: (u) => u.name.toLowerCase(),
  email: (u) => u.email.toLowerCase(),
};
function expectedOrder(users: ListedUser[], sort: SortField, order: 'asc' | 'desc') {
  const asc = [...users].sort((a, b) => cmp(KEY[sort](a), KEY[sort](b)) || cmp(a.id, b.id));
  return (order === 'asc' ? asc : asc.reverse()).map((u) => u.id);
}
const matches = (u: ListedUser, term: string) => u.name.toLowerCase().includes(term.toLowerCase()) || u.email.toLowerCase().includes(term.toLowerCase());

describe('user list: walking every page (decisions §5)', () => {
  for (const sort of ['created_at', 'name', 'email'] as const) {
    for (const order of ['asc', 'desc'] as const) {
      it(`limit 7, sort ${sort} ${order}: every user exactly once, in order, with consistent pagination`, async () => {
        const { pages, users, total } = await walkUsers(client, acct.ownerKey, `limit=7&sort=${sort}&order=${order}`);

        expect(total).toBe(everyone.length);
        expect(users.map((u) => u.id)).toEqual(expectedOrder(everyone, sort, order));
        const sizes = Array.from({ length: Math.ceil(everyone.length / 7) }, (_, i) => Math.min(7, everyone.length - i * 7));
        expect(pages.map((p) => p.length)).toEqual(sizes);
        expect(Object.keys(users[0]).sort()).toEqual(['created_at', 'email', 'id', 'name', 'role', 'status']);
      });
    }
  }

  it('defaults to created_at descending (newest first) and limit 50', async () => {
    const res = await client.request('GET', USERS, { token: acct.ownerKey });
    expect(res.body.data.map((u: ListedUser) => u.id)).toEqual(expectedOrder(everyone, 'created_at', 'desc'));
    expect(res.body.pagination).toEqual({ next_cursor: null, has_more: false, total_count: everyone.length });
  });

  it('a limit equal to the number of users answers one full page with has_more false', async () => {
    const res = await client.request('GET', `${USERS}?limit=${everyone.length}`, { token: acct.ownerKey });
    expect(res.body.data).toHaveLength(everyone.length);
    expect(res.body.pagination.has_more).toBe(false);
    expect(res.body.pagination.next_cursor).toBeNull();
  });

  it('limit 1 and limit 100 are accepted', async () => {
    const one = await client.request('GET', `${USERS}?limit=1`, { token: acct.ownerKey });
    const hundred = await client.request('GET', `${USERS}?limit=100`, { token: acct.ownerKey });
    expect(one.body.data).toHaveLength(1);
    expect(one.body.pagination).toMatchObject({ has_more: true, total_count: everyone.length });
    expect(hundred.body.data).toHaveLength(everyone.length);
  });
});

describe('user list: a name that is a prefix of another name', () => {
  it('sorts "Ann" before "Ann Lee" and "Ann-Marie" by name ascending, and after them descending', async () => {
    const a = await createTestAccount();
    for (const name of ['Ann Lee', 'Ann-Marie', 'Ann']) {
      expect((await client.request('POST', USERS, { token: a.ownerKey, body: { email: `${name.replace(/\W/g, '').toLowerCase()}@prefix.example`, name, send_invitation: false } })).status).toBe(201);
    }

    const asc = await client.request('GET', `${USERS}?sort=name&order=asc&search=ann`, { token: a.ownerKey });
    const desc = await client.request('GET', `${USERS}?sort=name&order=desc&search=ann`, { token: a.ownerKey });

    expect(asc.body.data.map((u: ListedUser) => u.name)).toEqual(['Ann', 'Ann Lee', 'Ann-Marie']);
    expect(desc.body.data.map((u: ListedUser) => u.name)).toEqual(['Ann-Marie', 'Ann Lee', 'Ann']);
  });
});

describe('user list: filters and the cursor that carries them', () => {
  const FILTERS: [string, (u: ListedUser) => boolean][] = [
    ['role=viewer', (u) => u.role === 'viewer'],
    ['role=admin', (u) => u.role === 'admin'],
    ['role=owner', (u) => u.role === 'owner'],
    ['status=invited', (u) => u.status === 'invited'],
    ['status=active', (u) => u.status === 'active'],
    ['status=suspended', (u) => u.status === 'suspended'],
    ['search=SMITH', (u) => matches(u, 'smith')],
    ['search=north.EXAMPLE', (u) => matches(u, 'north.example')],
    ['search=alpha%20smith', (u) => matches(u, 'alpha smith')],
    ['role=member&status=invited&search=smith', (u) => u.role === 'member' && u.status === 'invited' && matches(u, 'smith')],
  ];

  for (const [query, predicate] of FILTERS) {
    it(`${query}: walks exactly the matching users, and other parameters sent with the cursor change nothing`, async () => {
      const expected = expectedOrder(everyone.filter(predicate), 'name', 'asc');
      // Contradicting filters and sort on every later page: the cursor must win.
      const noise = '&role=viewer&status=suspended&search=zzz&sort=email&order=desc';

      const plain = await walkUsers(client, acct.ownerKey, `limit=2&sort=name&order=asc&${query}`);
      const noisy = await walkUsers(client, acct.ownerKey, `limit=2&sort=name&order=asc&${query}`, noise);

      expect(expected.length).toBeGreaterThan(0);
      expect(plain.total).toBe(expected.length);
      expect(plain.users.map((u) => u.id)).toEqual(expected);
      expect(noisy.users.map((u) => u.id)).toEqual(expected);
      expect(noisy.total).toBe(expected.length);
    });
  }

  it('the search matches the name or the email, case-insensitively', async () => {
    const byName = await client.request('GET', `${USERS}?search=JULIET`, { token: acct.ownerKey });
    const byEmail = await client.request('GET', `${USERS}?search=SMITH.9%40SOUTH`, { token: acct.ownerKey });
    expect(byName.body.data.map((u: ListedUser) => u.name)).toEqual(['juliet Stone']);
    expect(byEmail.body.data.map((u: ListedUser) => u.name)).toEqual(['juliet Stone']);
  });

  it('any role may page through the list (a viewer walks it too)', async () => {
    const { users } = await walkUsers(client, viewerKey, 'limit=10&sort=email&order=asc');
    expect(users.map((u) => u.id)).toEqual(expectedOrder(everyone, 'email', 'asc'));
  });

  it('answers an empty result with data [], next_cursor null, has_more false, total_count 0', async () => {
    for (const query of ['search=zzzz-nobody', 'role=owner&status=suspended', 'role=admin&search=nobody-here']) {
      const res = await client.request('GET', `${USERS}?${query}`, { token: acct.ownerKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: [], pagination: { next_cursor: null, has_more: false, total_count: 0 } });
    }
  });

  it('an empty search parameter means no search', async () => {
    const res = await client.request('GET', `${USERS}?search=&limit=100`, { token: acct.ownerKey });
    expect(res.body.pagination.total_count).toBe(everyone.length);
  });
});

describe('user list: bad cursors and parameters', () => {
  it('refuses a tampered cursor with 400 invalid_cursor', async () => {
    const first = await client.request('GET', `${USERS}?limit=2&role=viewer`, { token: acct.ownerKey });
    const cursor: string = first.body.pagination.next_cursor;
    const [body, sig] = cursor.split('.');
    const state = JSON.parse(Buffer.from(body, 'base64url').toString());
    const reencode = (s: unknown) => Buffer.from(JSON.stringify(s)).toString('base64url');
    const tampered = [
      `${reencode({ ...state, query: { ...state.query, role: undefined } })}.${sig}`,
      `${reencode({ ...state, total: 1 })}.${sig}`,
      `${reencode({ ...state, issuedAt: Date.now() + 1e9 })}.${sig}`,
      `${body}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`,
      `${body}.${sig}.${sig}`,
      `${body}`,
      'garbage',
      `.${sig}`,
      '%%%%',
    ];
    for (const c of tampered) {
      expectUserError(await client.request('GET', `${USERS}?cursor=${encodeURIComponent(c)}`, { token: acct.ownerKey }), 400, 'invalid_cursor');
    }
  });

  it("refuses another account's cursor with 400 invalid_cursor, even in the hands of an equal role", async () => {
    const first = await client.request('GET', `${USERS}?limit=2`, { token: acct.ownerKey });
    const other = await createTestAccount();
    const res = await client.request('GET', `${USERS}?cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`, { token: other.ownerKey });
    expectUserError(res, 400, 'invalid_cursor');
  });

  it('refuses a cursor of another list (a ticket cursor) with 400 invalid_cursor', async () => {
    const { encodeCursor } = await import('#shared/pagination/cursor.ts');
    const foreignList = await encodeCursor({ list: 'tickets', accountId: acct.accountId, query: { sort: 'created_at', order: 'desc' }, key: { pk: 'x', sk: 'y' } });
    expectUserError(await client.request('GET', `${USERS}?cursor=${encodeURIComponent(foreignList)}`, { token: acct.ownerKey }), 400, 'invalid_cursor');
  });

  it('refuses a cursor older than 24 hours with 400 invalid_cursor', async () => {
    const { encodeCursor } = await import('#shared/pagination/cursor.ts');
    const old = await encodeCursor({ list: 'users', accountId: acct.accountId, query: { sort: 'created_at', order: 'desc' }, key: { pk: 'x', sk: 'y' } }, Date.now() - 24 * 3600 * 1000 - 1000);
    expectUserError(await client.request('GET', `${USERS}?cursor=${encodeURIComponent(old)}`, { token: acct.ownerKey }), 400, 'invalid_cursor');
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1e9', 'limit'],
    ['sort=age', 'sort'],
    ['sort=NAME', 'sort'],
    ['order=up', 'order'],
    ['role=god', 'role'],
    ['status=gone', 'status'],
    [`search=${'s'.repeat(255)}`, 'search'],
  ])('answers 400 validation_error with the field for %s', async (query, field) => {
    expectUserError(await client.request('GET', `${USERS}?${query}`, { token: acct.ownerKey }), 400, 'validation_error', field);
  });
});
