import { beforeAll, describe, expect, it } from 'vitest';
import { READ_BUDGET } from '#shared/db/query.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, storeTickets, ticketRecord, TICKETS, walk, type Desk } from '../support/desk.ts';

/**
 * Bounded work per request: a filtered cursor list that no view serves
 * (assignee with priority; the views of decisions §13 are tested in
 * ticket-views.test.ts) reads at most READ_BUDGET items per page, answers the matches found so far, and continues from its
 * read position, so walking links.next returns every match exactly once.
 */
const { client } = useGateway();

const TOTAL = Math.round(READ_BUDGET * 2.3);
let acct: TestAccount;
let admin: Desk;
let agentId: string;
let loneId: string;
/** Ids of the sparse matches (assigned to the agent), newest first. */
let matches: string[] = [];
let loneMatch: string;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  [agentId, loneId] = await Promise.all([acct.addUser('member'), acct.addUser('member')]).then((us) => us.map((u) => u.id));
  // Stored straight into the table in batches (2,300 API calls would dominate the run); ids are time-ordered.
  const created = await Promise.all(
    Array.from({ length: TOTAL }, (_, n) =>
      ticketRecord(acct.accountId, new Date(Date.now() - (TOTAL - n) * 1000), { subject: `bulk ${n}`, assigneeId: n === 3 ? loneId : n % 131 === 5 ? agentId : null }),
    ),
  );
  await storeTickets(created);
  const newestFirst = [...created].sort((a, b) => (a.id < b.id ? 1 : -1));
  matches = newestFirst.filter((t) => t.assigneeId === agentId).map((t) => t.id);
  loneMatch = newestFirst.find((t) => t.assigneeId === loneId)!.id;
}, 120_000);

describe(`filtered cursor lists read at most ${READ_BUDGET} items per request`, () => {
  it('pages through budget-limited partial pages; links.next yields every match exactly once, in order', async () => {
    const { pages, items } = await walk(admin, `${TICKETS}?assignee_id=${agentId}&priority=normal&page_size=20&sort_by=created_at&sort_order=desc`, 'tickets');

    expect(items.map((t: { id: string }) => t.id)).toEqual(matches);
    expect(new Set(items.map((t: { id: string }) => t.id)).size).toBe(items.length);
    // The matches fit in one page of 20, yet the budget splits them over several partial pages.
    expect(matches.length).toBeLessThanOrEqual(20);
    expect(pages.length).toBeGreaterThanOrEqual(Math.ceil(TOTAL / READ_BUDGET));
    for (const p of pages.slice(0, -1)) {
      expect(p.body.meta.hasMore).toBe(true);
      expect(p.body.tickets.length).toBeLessThan(20);
    }
    expect(pages.at(-1)!.body.meta.hasMore).toBe(false);
    expect(pages.at(-1)!.body.links.next).toBeNull();
  });

  it('a budget without a match answers an empty page with hasMore and a cursor that moves on, until the one match', async () => {
    const { pages, items } = await walk(admin, `${TICKETS}?assignee_id=${loneId}&priority=normal&page_size=10&sort_order=desc`, 'tickets');

    expect(items.map((t: { id: string }) => t.id)).toEqual([loneMatch]);
    expect(pages[0].body.tickets).toEqual([]);
    expect(pages[0].body.meta.hasMore).toBe(true);
    // Each page's cursor differs: every page made progress.
    const links = pages.map((p) => p.body.links.next).filter(Boolean);
    expect(new Set(links).size).toBe(links.length);
    expect(pages.length).toBeLessThanOrEqual(Math.ceil(TOTAL / READ_BUDGET) + 1);
  });

  it('an unfiltered page still costs one read of page_size + 1 items', async () => {
    const res = await admin.get(`${TICKETS}?page_size=25`);
    expect(res.body.tickets).toHaveLength(25);
    expect(res.body.meta.hasMore).toBe(true);
  });
});

describe('page-number lists take their unfiltered total from a counter kept with creates and deletes', () => {
  it('contacts: total and totalPages follow creates and deletes; a filtered total is counted', async () => {
    const a = await createTestAccount();
    const d = as(client, a.ownerKey);
    const CONTACTS = '/helpdesk/api/contacts';
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await d.post(CONTACTS, { name: `Counted ${i}`, email: `counted${i}@example.com` });
      expect(res.status).toBe(201);
      ids.push(res.body.data.id);
    }
    for (const id of ids.slice(0, 2)) expect((await d.del(`${CONTACTS}/${id}`)).status).toBe(204);

    const page2 = await d.get(`${CONTACTS}?limit=2&page=2&sort_by=created_at&sort_order=asc`);
    expect(page2.body.meta).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3 });
    expect(page2.body.data.map((c: { id: string }) => c.id)).toEqual(ids.slice(4, 6));
    const filtered = await d.get(`${CONTACTS}?limit=2&search=counted 6`);
    expect(filtered.body.meta.total).toBe(1);
  });
});
