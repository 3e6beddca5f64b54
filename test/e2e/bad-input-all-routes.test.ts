import { describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

const BODIES = [
  '{',
  '[]',
  'null',
  '"x"',
  '{"a":1}',
  JSON.stringify({ ticket: [], ticketField: 'x', customFieldOption: null, webhook: 1 }),
  JSON.stringify({ ticket: { subject: 'x'.repeat(300_000) } }),
  JSON.stringify({ name: { $gt: '' }, email: ['a'], ticket_id: 1 }),
];
const IDS = ['system_status', '..%2F..', 'a'.repeat(65)];
const BAD_QUERY = '?page_size=abc&limit=-1&page=0&after=zz&cursor=zz&sort_by=x&active=maybe&ticket_id=';

describe('bad input on every route of the route table', () => {
  it('never answers 5xx, always JSON', async () => {
    const acct = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    const cases: Array<{ method: string; url: string; rawBody?: string }> = [];
    // Every route with each odd id; bad bodies with one id (body checks come after the id is parsed); bad queries where there is a query.
    for (const route of allRoutes()) {
      IDS.forEach((id, i) => {
        const path = route.path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
        for (const rawBody of route.method === 'GET' || i > 0 ? [undefined] : [undefined, ...BODIES]) {
          for (const query of route.query ? ['', BAD_QUERY] : ['']) cases.push({ method: route.method, url: path + query, rawBody });
        }
      });
    }
    // A few requests at a time: the sweep is thousands of requests, and each is independent.
    let next = 0;
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (next < cases.length) {
          const c = cases[next++];
          const res = await client.request(c.method, c.url, { token, rawBody: c.rawBody });
          const type = String(res.headers.get('content-type') ?? 'application/json');
          if (res.status >= 500 || !/json/.test(type)) failures.push(`${res.status} ${type} ${c.method} ${c.url} ${String(c.rawBody).slice(0, 40)}`);
        }
      }),
    );
    expect(cases.length).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  }, 120_000);
});
