/** GET /ticket_fields: system fields first, then the custom fields sorted, filtered by active and paged. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, FIELDS, linkParams, newField, SYSTEM_FIELD_IDS, walk, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

describe('GET /ticket_fields listing', () => {
  let desk: Desk;
  let custom: Json[];
  let inactive: Json[];

  beforeAll(async () => {
    desk = as(client, (await createTestAccount()).ownerKey);
    const specs: [string, number, boolean][] = [
      ['Mango', 40, true],
      ['apple', 10, true],
      ['Cherry', 30, false],
      ['banana', 20, true],
      ['Same', 50, true],
      ['Same', 50, true],
      ['Kiwi', 15, false],
      ['date', 5, true],
      ['Elder', 25, true],
      ['fig', 35, true],
      ['Grape', 45, false],
      ['honeydew', 12, true],
    ];
    custom = [];
    for (const [i, [title, position, active]] of specs.entries()) custom.push(await newField(desk, { title, fieldKey: `k${i}`, position, active, type: 'text' }));
    inactive = custom.filter((f) => !f.active);
  });

  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  function expectedCustom(fields: Json[], sortBy: string, order: string) {
    const key = (f: Json) => (sortBy === 'position' ? f.position : sortBy === 'title' ? f.title.toLowerCase() : f.createdAt);
    const sorted = [...fields].sort((a, b) => cmp(key(a), key(b)) || cmp(a.id, b.id));
    return (order === 'asc' ? sorted : sorted.reverse()).map((f) => f.id);
  }

  const combos = (['position', 'title', 'created_at'] as const).flatMap((s) => (['asc', 'desc'] as const).map((o) => [s, o] as const));

  it.each(combos)('sort_by=%s sort_order=%s: a page_size 4 walk gives system fields, then every custom field once in order', async (sortBy, order) => {
    const params = { sort_by: sortBy, sort_order: order, page_size: '4' };

    const { pages, items } = await walk(desk, `${FIELDS}?${new URLSearchParams(params)}`, 'ticketFields');

    const ids = items.map((f: Json) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 7)).toEqual([...SYSTEM_FIELD_IDS]);
    expect(ids.slice(7)).toEqual(expectedCustom(custom, sortBy, order));
    pages.forEach((p, i) => {
      const last = i === pages.length - 1;
      expect(p.body.meta).toEqual({ pageSize: 4, hasMore: !last });
      if (last) expect(p.body.links.next).toBeNull();
      else {
        expect(p.body.ticketFields).toHaveLength(4);
        const { path, params: got } = linkParams(p.body.links.next);
        const { after, ...rest } = got;
        expect(path).toBe(FIELDS);
        expect(after).toBeTruthy();
        expect(rest).toEqual(params);
      }
    });
  });

  it('active=true lists system fields and active custom fields only', async () => {
    const { items } = await walk(desk, `${FIELDS}?active=true&page_size=5`, 'ticketFields');

    const ids = items.map((f: Json) => f.id);
    expect(ids.slice(0, 7)).toEqual([...SYSTEM_FIELD_IDS]);
    expect(ids.slice(7)).toEqual(
      expectedCustom(
        custom.filter((f) => f.active),
        'position',
        'asc',
      ),
    );
  });

  it('active=false lists only the inactive custom fields', async () => {
    const { items, pages } = await walk(desk, `${FIELDS}?active=false&page_size=2`, 'ticketFields');

    expect(items.map((f: Json) => f.id)).toEqual(expectedCustom(inactive, 'position', 'asc'));
    expect(items.every((f: Json) => f.active === false)).toBe(true);
    for (const p of pages.slice(0, -1)) expect(linkParams(p.body.links.next).params).toMatchObject({ active: 'false', page_size: '2' });
  });

  it.each([
    ['active=yes', 'active'],
    ['active=1', 'active'],
    ['page_size=101', 'page_size'],
    ['page_size=0', 'page_size'],
    ['page_size=abc', 'page_size'],
    ['sort_by=fieldKey', 'sort_by'],
    ['sort_order=down', 'sort_order'],
  ])('%s answers 400 BAD_REQUEST with details', async (query, field) => {
    const res = await desk.get(`${FIELDS}?${query}`);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it.each([
    ['page_size=7 (a first page of only system fields)', 'page_size=7', 7],
    ['active=true&page_size=8 (two exactly full pages)', 'active=true&page_size=8', 8],
  ])('%s: pages are full, the last has hasMore false and links.next null', async (_label, query, size) => {
    const { pages, items } = await walk(desk, `${FIELDS}?${query}`, 'ticketFields');

    const ids = items.map((f: Json) => f.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.slice(0, 7)).toEqual([...SYSTEM_FIELD_IDS]);
    const expectedCount = 7 + (query.startsWith('active=true') ? custom.filter((f) => f.active).length : custom.length);
    expect(ids).toHaveLength(expectedCount);
    expect(pages).toHaveLength(Math.ceil(expectedCount / size));
    for (const p of pages.slice(0, -1)) expect(p.body.ticketFields).toHaveLength(size);
    expect(pages.at(-1)!.body.meta.hasMore).toBe(false);
    expect(pages.at(-1)!.body.ticketFields.length).toBeGreaterThan(0);
  });

  it('page_size 100 is accepted', async () => {
    const res = await desk.get(`${FIELDS}?page_size=100`);

    expect(res.status).toBe(200);
    expect(res.body.ticketFields).toHaveLength(7 + custom.length);
    expect(res.body.meta).toEqual({ pageSize: 100, hasMore: false });
  });

  it('answers 400 BAD_REQUEST to a tampered cursor', async () => {
    const first = await desk.get(`${FIELDS}?page_size=3`);
    const after = linkParams(first.body.links.next).params.after;

    const res = await desk.get(`${FIELDS}?after=${encodeURIComponent(`x${after}`)}`);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });
});
