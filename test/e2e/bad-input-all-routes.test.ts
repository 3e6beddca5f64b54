import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../functions/registry.ts';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

const BODIES = ['{', '[]', 'null', '"x"', '{"a":1}', JSON.stringify({ ticket: [], ticketField: 'x', customFieldOption: null, webhook: 1 }), JSON.stringify({ ticket: { subject: 'x'.repeat(300_000) } }), JSON.stringify({ name: { $gt: '' }, email: ['a'], ticket_id: 1 })];
const IDS = ['system_status', '..%2F..', 'a'.repeat(65)];

describe('bad input on every route of the route table', () => {
  it('never answers 5xx, always JSON', async () => {
    const acct = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    for (const route of allRoutes()) {
      for (const id of IDS) {
        const path = route.path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
        for (const rawBody of route.method === 'GET' ? [undefined] : [undefined, ...BODIES]) {
          for (const query of ['', '?page_size=abc&limit=-1&page=0&after=zz&cursor=zz&sort_by=x&active=maybe&ticket_id=']) {
            const res = await client.request(route.method, path + query, { token, rawBody });
            expect(res.status, `${route.method} ${path}${query} ${String(rawBody).slice(0, 40)}`).toBeLessThan(500);
            expect(String(res.headers.get('content-type') ?? 'application/json'), `${route.method} ${path}`).toMatch(/json/);
          }
        }
      }
    }
  }, 120_000);
});
