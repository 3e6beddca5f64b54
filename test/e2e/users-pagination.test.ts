import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';

const { client } = useGateway();
const USERS = '/playbook/api/v1/users';

let acct: TestAccount;
const NAMES = ['delta', 'Alpha', 'charlie', 'Bravo', 'echo', 'foxtrot', 'Golf', 'hotel', 'India', 'juliet', 'kilo', 'Lima', 'mike', 'November', 'oscar', 'papa', 'Quebec', 'romeo', 'sierra', 'Tango', 'uniform', 'victor'];

beforeAll(async () => {
  acct = await createTestAccount();
  for (const [i, name] of NAMES.entries()) {
    const role = i % 3 === 0 ? 'viewer' : 'member';
    await client.request('POST', USERS, { token: acct.ownerKey, body: { email: `${name.toLowerCase()}.${i}@Example.com`, name: `${name} Person`, role } });
  }
});

async function walk(query: string) {
  const seen: any[] = [];
  let res = await client.request('GET', `${USERS}?${query}`, { token: acct.ownerKey });
  const total = res.body.pagination.total_count;
  for (;;) {
    expect(res.status).toBe(200);
    seen.push(...res.body.data);
    expect(res.body.pagination.has_more).toBe(res.body.pagination.next_cursor !== null);
    expect(res.body.pagination.total_count).toBe(total);
    if (!res.body.pagination.has_more) break;
    res = await client.request('GET', `${USERS}?limit=7&cursor=${encodeURIComponent(res.body.pagination.next_cursor)}`, { token: acct.ownerKey });
  }
  return { seen, total };
}

describe('user list pagination (decisions §5)', () => {
  const sortKey: Record<string, (u: any) => string> = { created_at: (u) => `${u.created_at}#${u.id}`, name: (u) => u.name.toLowerCase(), email: (u) => u.email.toLowerCase() };
  for (const sort of ['created_at', 'name', 'email']) {
    for (const order of ['asc', 'desc']) {
      it(`walks every page sorted by ${sort} ${order} with no duplicate or missing user`, async () => {
        const { seen, total } = await walk(`limit=7&sort=${sort}&order=${order}`);
        expect(total).toBe(NAMES.length + 1);
        expect(seen).toHaveLength(total);
        expect(new Set(seen.map((u) => u.id)).size).toBe(total);
        const keys = seen.map(sortKey[sort]);
        const expected = [...keys].sort();
        expect(keys).toEqual(order === 'asc' ? expected : expected.reverse());
        expect(Object.keys(seen[0]).sort()).toEqual(['created_at', 'email', 'id', 'name', 'role', 'status']);
      });
    }
  }

  it('defaults to newest first, limit 50', async () => {
    const res = await client.request('GET', USERS, { token: acct.ownerKey });
    expect(res.body.data).toHaveLength(NAMES.length + 1);
    expect(res.body.data[0].name).toBe('victor Person');
    expect(res.body.pagination).toEqual({ next_cursor: null, has_more: false, total_count: NAMES.length + 1 });
  });

  it('filters by role, status and search (case-insensitive on name or email), and the cursor keeps them', async () => {
    const { seen, total } = await walk('limit=3&role=viewer');
    expect(total).toBe(NAMES.filter((_, i) => i % 3 === 0).length);
    expect(seen.every((u) => u.role === 'viewer')).toBe(true);
    const first = await client.request('GET', `${USERS}?limit=2&role=viewer`, { token: acct.ownerKey });
    // Different filters sent with the cursor do not change the list it continues.
    const second = await client.request('GET', `${USERS}?limit=2&role=member&cursor=${encodeURIComponent(first.body.pagination.next_cursor)}`, { token: acct.ownerKey });
    expect(second.body.data.every((u: { role: string }) => u.role === 'viewer')).toBe(true);
    const byName = await client.request('GET', `${USERS}?search=ALPHA`, { token: acct.ownerKey });
    expect(byName.body.data.map((u: { name: string }) => u.name)).toEqual(['Alpha Person']);
    const byEmail = await client.request('GET', `${USERS}?search=juliet.9@example`, { token: acct.ownerKey });
    expect(byEmail.body.pagination.total_count).toBe(1);
    const invited = await client.request('GET', `${USERS}?status=invited`, { token: acct.ownerKey });
    expect(invited.body.pagination.total_count).toBe(NAMES.length);
  });

  it('answers an empty result with data [], next_cursor null, has_more false, total_count 0', async () => {
    const res = await client.request('GET', `${USERS}?search=zzzz-nobody`, { token: acct.ownerKey });
    expect(res.body).toEqual({ data: [], pagination: { next_cursor: null, has_more: false, total_count: 0 } });
  });

  it('refuses a tampered cursor and a cursor of another account with 400 invalid_cursor', async () => {
    const first = await client.request('GET', `${USERS}?limit=2`, { token: acct.ownerKey });
    const cursor: string = first.body.pagination.next_cursor;
    const [body, sig] = cursor.split('.');
    const state = JSON.parse(Buffer.from(body, 'base64url').toString());
    const tampered = `${Buffer.from(JSON.stringify({ ...state, query: { ...state.query, role: 'owner' } })).toString('base64url')}.${sig}`;
    for (const c of [tampered, 'garbage', `${body}.${sig}x`]) {
      const res = await client.request('GET', `${USERS}?cursor=${encodeURIComponent(c)}`, { token: acct.ownerKey });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_cursor');
    }
    const other = await createTestAccount();
    const foreign = await client.request('GET', `${USERS}?cursor=${encodeURIComponent(cursor)}`, { token: other.ownerKey });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.code).toBe('invalid_cursor');
  });

  it('refuses an expired cursor (older than 24 hours)', async () => {
    const { encodeCursor } = await import('../../shared/pagination/cursor.ts');
    const old = await encodeCursor({ list: 'users', accountId: acct.accountId, query: { sort: 'created_at', order: 'desc' }, key: { pk: 'x', sk: 'y' } }, Date.now() - 24 * 3600 * 1000 - 1000);
    const res = await client.request('GET', `${USERS}?cursor=${encodeURIComponent(old)}`, { token: acct.ownerKey });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_cursor');
  });

  it.each([['limit=0', 'limit'], ['limit=101', 'limit'], ['limit=abc', 'limit'], ['sort=age', 'sort'], ['order=up', 'order'], ['role=god', 'role'], ['status=gone', 'status']])('answers 400 validation_error for %s', async (query, field) => {
    const res = await client.request('GET', `${USERS}?${query}`, { token: acct.ownerKey });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field });
  });
});
