import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, insertTicketRecord, linkParams, PRIORITY_ORDER, STATUS_ORDER, TICKETS, walk, type Desk, type Json } from '../support/desk.ts';
import { clockPast } from '../support/wait.ts';

const { client } = useGateway();

let acct: TestAccount;
let admin: Desk;
let memberId: string;
/** Final state of every ticket of the account, as the API answered it. */
let all: Json[];

const STATUSES = ['new', 'open', 'pending', 'resolved'] as const;
const PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  memberId = (await acct.addUser('member')).id;
  const byId = new Map<string, Json>();
  // 23 tickets, created one after another so creation order is well defined;
  // two are closed (written as an automation would), several share a status/priority.
  for (let i = 0; i < 23; i++) {
    let t: Json;
    if (i === 7 || i === 15) {
      t = await insertTicketRecord(acct.accountId, { subject: `closed ${i}`, priority: PRIORITIES[i % 4] });
    } else {
      const res = await admin.post(TICKETS, {
        ticket: { subject: `ticket ${i}`, status: STATUSES[(i * 3) % 4], priority: PRIORITIES[(i * 5 + 1) % 4], assigneeId: i % 3 === 0 ? memberId : null },
      });
      expect(res.status).toBe(201);
      t = res.body.ticket;
    }
    byId.set(t.id, t);
    // The next ticket is stamped later than this one.
    await clockPast(t.createdAt);
  }
  // Touch a few older tickets so updated_at order differs from creation order.
  const ids = [...byId.keys()];
  for (const id of [ids[2], ids[0], ids[10]]) {
    const res = await admin.put(`${TICKETS}/${id}`, { ticket: { tags: ['touched'] } });
    expect(res.status).toBe(200);
    byId.set(id, res.body.ticket);
    await clockPast(res.body.ticket.updatedAt);
  }
  all = [...byId.values()];
});

const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
/** Expected order: the sort key, ties by creation (time-ordered id); desc reverses both. */
function expectedOrder(tickets: Json[], sortBy: string, order: 'asc' | 'desc'): string[] {
  const key = (t: Json): string | number =>
    sortBy === 'status' ? STATUS_ORDER.indexOf(t.status) : sortBy === 'priority' ? PRIORITY_ORDER.indexOf(t.priority) : sortBy === 'updated_at' ? t.updatedAt : t.createdAt;
  const sorted = [...tickets].sort((a, b) => cmp(key(a), key(b)) || cmp(a.id, b.id));
  return (order === 'asc' ? sorted : sorted.reverse()).map((t) => t.id);
}

/** Every page but the last: full, hasMore true, links.next with all request params + after. Last: hasMore false, next null. */
function expectConsistentPages(pages: { body: Json }[], requestParams: Record<string, string>, pageSize: number) {
  pages.forEach((p, i) => {
    const last = i === pages.length - 1;
    expect(p.body.meta).toEqual({ pageSize, hasMore: !last });
    if (last) {
      expect(p.body.links.next).toBeNull();
      expect(p.body.tickets.length).toBeLessThanOrEqual(pageSize);
    } else {
      expect(p.body.tickets).toHaveLength(pageSize);
      const { path, params } = linkParams(p.body.links.next);
      expect(path).toBe(TICKETS);
      const { after, ...rest } = params;
      expect(after).toEqual(expect.any(String));
      expect(after.length).toBeGreaterThan(0);
      expect(rest).toEqual(requestParams);
    }
  });
}

describe('GET /tickets sorting and cursor pages', () => {
  const combos = (['created_at', 'updated_at', 'status', 'priority'] as const).flatMap((sortBy) => (['asc', 'desc'] as const).map((order) => [sortBy, order] as const));

  it.each(combos)('sort_by=%s sort_order=%s: walking links.next with page_size 5 returns every ticket once, in order', async (sortBy, order) => {
    const params = { sort_by: sortBy, sort_order: order, page_size: '5' };

    const { pages, items } = await walk(admin, `${TICKETS}?${new URLSearchParams(params)}`, 'tickets');

    const ids = items.map((t: Json) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expectedOrder(all, sortBy, order));
    const byId = new Map(all.map((t) => [t.id, t]));
    expect(items).toEqual(ids.map((id: string) => byId.get(id)));
    expect(pages).toHaveLength(Math.ceil(all.length / 5));
    expectConsistentPages(pages, params, 5);
  });

  it.each(['created_at', 'status'])('sort_by=%s: a page size that divides the count exactly ends with hasMore false and no empty extra page', async (sortBy) => {
    const pageSize = all.length;

    const res = await admin.get(`${TICKETS}?sort_by=${sortBy}&page_size=${pageSize}`);

    expect(res.body.tickets).toHaveLength(all.length);
    expect(res.body.meta).toEqual({ pageSize, hasMore: false });
    expect(res.body.links.next).toBeNull();
  });

  it('defaults to created_at desc with page size 25', async () => {
    const res = await admin.get(TICKETS);

    expect(res.status).toBe(200);
    expect(res.body.meta).toEqual({ pageSize: 25, hasMore: false });
    expect(res.body.links.next).toBeNull();
    expect(res.body.tickets.map((t: Json) => t.id)).toEqual(expectedOrder(all, 'created_at', 'desc'));
  });

  it('returns full ticket objects in the list', async () => {
    const res = await admin.get(`${TICKETS}?page_size=100`);

    const byId = new Map(all.map((t) => [t.id, t]));
    for (const t of res.body.tickets) expect(t).toEqual(byId.get(t.id));
  });
});

describe('GET /tickets filters', () => {
  it.each([
    ['status', 'open', (t: Json) => t.status === 'open'],
    ['status', 'closed', (t: Json) => t.status === 'closed'],
    ['priority', 'high', (t: Json) => t.priority === 'high'],
    ['assignee_id', 'MEMBER', (t: Json) => t.assigneeId === memberId],
  ] as const)('%s=%s returns exactly the matching tickets across pages', async (name, value, match) => {
    const params = { [name]: value === 'MEMBER' ? memberId : value, page_size: '2' };

    const { pages, items } = await walk(admin, `${TICKETS}?${new URLSearchParams(params)}`, 'tickets');

    const expected = all.filter(match);
    expect(expected.length).toBeGreaterThan(1);
    expect(items.map((t: Json) => t.id)).toEqual(expectedOrder(expected, 'created_at', 'desc'));
    expectConsistentPages(pages, params, 2);
  });

  it('combines filters with a sort, and links.next keeps filters, sort and page_size', async () => {
    const params = { status: 'new', priority: 'normal', sort_by: 'updated_at', sort_order: 'asc', page_size: '1' };
    const expected = all.filter((t) => t.status === 'new' && t.priority === 'normal');

    const { pages, items } = await walk(admin, `${TICKETS}?${new URLSearchParams(params)}`, 'tickets');

    expect(expected.length).toBeGreaterThan(0);
    expect(items.map((t: Json) => t.id)).toEqual(expectedOrder(expected, 'updated_at', 'asc'));
    expectConsistentPages(pages, params, 1);
  });

  it('answers an empty page with hasMore false and next null when nothing matches', async () => {
    const res = await admin.get(`${TICKETS}?assignee_id=usr_nobody`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ tickets: [], meta: { pageSize: 25, hasMore: false }, links: { next: null } });
  });
});

describe('GET /tickets invalid query', () => {
  it.each([
    ['page_size=0', 'page_size'],
    ['page_size=101', 'page_size'],
    ['page_size=x', 'page_size'],
    ['page_size=2.5', 'page_size'],
    ['sort_by=subject', 'sort_by'],
    ['sort_order=up', 'sort_order'],
    ['status=waiting', 'status'],
    ['priority=critical', 'priority'],
  ])('%s answers 400 BAD_REQUEST with details naming the parameter', async (query, field) => {
    const res = await admin.get(`${TICKETS}?${query}`);

    expect(res.status).toBe(400);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
  });

  it('answers 400 BAD_REQUEST to a tampered after cursor', async () => {
    const first = await admin.get(`${TICKETS}?page_size=5`);
    const after = linkParams(first.body.links.next).params.after;
    const [body, sig] = after.split('.');
    const flipped = body.slice(0, -2) + (body.at(-2) === 'A' ? 'B' : 'A') + body.at(-1);

    const tampered = await admin.get(`${TICKETS}?page_size=5&after=${encodeURIComponent(`${flipped}.${sig}`)}`);
    const garbage = await admin.get(`${TICKETS}?after=not-a-cursor`);

    for (const res of [tampered, garbage]) {
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('BAD_REQUEST');
    }
  });

  it("answers 400 BAD_REQUEST to another account's cursor", async () => {
    const first = await admin.get(`${TICKETS}?page_size=5`);
    const other = await createTestAccount();

    const res = await client.request('GET', first.body.links.next, { token: other.ownerKey });

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 400 BAD_REQUEST to a ticket-field cursor used on the ticket list', async () => {
    const fieldsPage = await admin.get('/helpdesk/api/v1/ticket_fields?page_size=2');
    const after = linkParams(fieldsPage.body.links.next).params.after;

    const res = await admin.get(`${TICKETS}?after=${encodeURIComponent(after)}`);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });
});
