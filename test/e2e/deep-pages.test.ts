import { describe, expect, it } from 'vitest';
import { PAGE_QUERY_LIMIT } from '#shared/db/query.ts';
import { MAX_PAGE } from '#shared/pagination/numbered.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, CONTACTS, expectBadQuery, must, newContact, newOrg, ORGS, type Api, type Json } from '../support/helpdesk.ts';
import { contactRecord, storeContacts } from '../support/store.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

/**
 * How deep a page-number list goes (decisions §5, issue 33: `?page=2147483648`
 * answered 503 after asking DynamoDB for a Limit of ~3 x 10^10). Any page up to
 * 2^53 answers; one past the last answers `data: []` with page 1's meta and
 * reads nothing of the list; a page inside the list reads its depth in Queries
 * DynamoDB accepts. What the functions ask of the store is seen on the wire.
 */
const store = useStoreProxy();
const { client } = useGateway();

const GROUPS = '/helpdesk/api/groups';

interface SeenQuery {
  limit?: number;
  select?: string;
  index?: string;
}

/** Run `request` and collect every Query the functions send meanwhile (Limit, Select, index). */
async function queriesDuring<T>(request: () => Promise<T>): Promise<{ answer: T; queries: SeenQuery[] }> {
  const queries: SeenQuery[] = [];
  store.inject((operation, body) => {
    if (operation === 'Query') queries.push({ limit: body.Limit, select: body.Select, index: body.IndexName });
    return undefined;
  });
  try {
    return { answer: await request(), queries };
  } finally {
    store.inject(undefined);
  }
}

/** Queries that read items (not a Select COUNT): what "reading the list" costs. */
const itemQueries = (queries: SeenQuery[]) => queries.filter((q) => q.select !== 'COUNT');

/**
 * An account with 3 organizations, 4 contacts and 2 groups, made through the API (so the list counters are kept), side
 * by side; made once and read by each test that needs it (they only read).
 */
let small: Promise<Api> | undefined;
function smallAccount(): Promise<Api> {
  small ??= (async () => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    await Promise.all([
      ...[0, 1, 2].map((i) => newOrg(d, { name: `Deep ${i}`, organizationalDomain: `deep${i}.example` })),
      ...[0, 1, 2, 3].map((i) => newContact(d, { name: `Deep Person ${i}`, email: `deep${i}@people.example` })),
      ...[0, 1].map(async (i) => must(await d.post(GROUPS, { name: `Deep group ${i}` }), 201, 'create group')),
    ]);
    return d;
  })();
  return small;
}

describe('a page past the last one (any page up to 2^53)', () => {
  it.each([
    ['organizations', ORGS],
    ['contacts', CONTACTS],
  ])('%s: page=2147483648 and page=9007199254740992 answer 200, data [] and page 1 meta, reading no item of the list', async (_name, path) => {
    const d = await smallAccount();
    for (const query of ['', 'limit=2&', 'sort_by=name&sort_order=asc&limit=3&']) {
      const first = must(await d.get(`${path}?${query}page=1`), 200, `page 1 of ${path}?${query}`);
      expect(first.data.length).toBeGreaterThan(0);
      for (const page of ['2147483648', '9007199254740992', '2', String(first.meta.totalPages + 1)]) {
        if (page === '2' && first.meta.totalPages >= 2) continue;
        const { answer, queries } = await queriesDuring(() => d.get(`${path}?${query}page=${page}`));
        expect(answer.status, `${path}?${query}page=${page}: ${answer.text.slice(0, 300)}`).toBe(200);
        expect(answer.body).toEqual({ success: true, data: [], meta: { ...first.meta, page: Number(page) } });
        // The total comes from the list's counter: nothing of the list is read.
        expect(itemQueries(queries), `${path}?${query}page=${page}`).toEqual([]);
      }
    }
    expect(Number('9007199254740992')).toBe(MAX_PAGE);
  });

  it('groups: a page past the last one answers data [] with page 1 meta', async () => {
    const d = await smallAccount();
    const first = must(await d.get(`${GROUPS}?limit=1`), 200, 'groups page 1');
    expect(first.meta).toMatchObject({ page: 1, limit: 1, total: 2, totalPages: 2 });
    for (const page of ['3', '2147483648', '9007199254740992']) {
      const res = must(await d.get(`${GROUPS}?limit=1&page=${page}`), 200, `groups page ${page}`);
      expect(res).toEqual({ success: true, data: [], meta: { ...first.meta, page: Number(page) } });
    }
  });

  it.each([
    ['organizations', ORGS],
    ['contacts', CONTACTS],
    ['groups', GROUPS],
  ])('%s: page 9007199254740993 (2^53 + 1), 0, 1.5 and other non-pages answer 400 BAD_REQUEST naming page', async (_name, path) => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    for (const page of ['9007199254740993', '0', '1.5', '-1', '1e3', '0x10', 'abc', '18446744073709551616', '9'.repeat(400)]) {
      expectBadQuery(await d.get(`${path}?page=${page}`), 'page');
    }
  });
});

/**
 * Store `n` contacts straight into the table, 10 ms apart from a day ago, and count them in the account's list. Without
 * their search words: nothing here searches, and the words were 4 of each contact's 6 items.
 */
async function seedContacts(acct: TestAccount, n: number): Promise<void> {
  await storeContacts(
    Array.from({ length: n }, (_, i) => contactRecord(acct.accountId, new Date(Date.now() - 86_400_000 + i * 10), { name: `Deep Filler ${i}`, email: `filler${i}@deep.example` })),
    { words: false },
  );
}

describe('a deep page inside the list', () => {
  it(`reads its depth in Queries of at most ${PAGE_QUERY_LIMIT} items, and answers the right items`, async () => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const n = PAGE_QUERY_LIMIT + 50;
    await seedContacts(acct, n);

    // Page 11 of 100, oldest first: items 1,000..1,049, the 50 newest.
    const { answer, queries } = await queriesDuring(() => d.get(`${CONTACTS}?sort_by=created_at&sort_order=asc&limit=100&page=11`));
    const deep = must(answer, 200, 'page 11');
    expect(deep.meta).toEqual({ page: 11, limit: 100, total: n, totalPages: 11 });
    const newest = must(await d.get(`${CONTACTS}?sort_by=created_at&sort_order=desc&limit=50`), 200, 'newest 50').data;
    expect(deep.data.map((c: Json) => c.id)).toEqual(newest.map((c: Json) => c.id).reverse());

    const reads = itemQueries(queries);
    expect(reads.length, JSON.stringify(queries)).toBeGreaterThanOrEqual(2);
    for (const q of reads) expect(q.limit, JSON.stringify(queries)).toBeLessThanOrEqual(PAGE_QUERY_LIMIT);
    // The page read went no further than its own last item.
    expect(reads.reduce((sum, q) => sum + (q.limit ?? 0), 0)).toBe(11 * 100);

    // Past the end of this larger list, still nothing of it is read.
    const past = await queriesDuring(() => d.get(`${CONTACTS}?sort_by=created_at&sort_order=asc&limit=100&page=2147483648`));
    expect(must(past.answer, 200, 'past the end')).toEqual({ success: true, data: [], meta: { page: 2147483648, limit: 100, total: n, totalPages: 11 } });
    expect(itemQueries(past.queries)).toEqual([]);
  }, 120_000);
});
