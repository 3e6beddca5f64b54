import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway } from '../support/api.ts';

const { client } = useGateway();
const USERS = '/playbook/api/v1/users';

describe('user management under concurrency', () => {
  it('50 parallel creates of one email give exactly one 201 and 49 × 409', async () => {
    const acct = await createTestAccount();
    const email = uniqueEmail('race');
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => client.request('POST', USERS, { token: acct.ownerKey, body: { email: i % 2 ? email : email.toUpperCase(), name: `Racer ${i}` } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409 && r.body.error.code === 'resource_already_exists')).toHaveLength(49);
    const listed = await client.request('GET', `${USERS}?search=${encodeURIComponent(email)}`, { token: acct.ownerKey });
    expect(listed.body.pagination.total_count).toBe(1);
  });

  it('50 parallel ownership transfers leave exactly one owner', async () => {
    const acct = await createTestAccount();
    const targets = await Promise.all(Array.from({ length: 50 }, () => acct.addUser('member')));
    const results = await Promise.all(targets.map((t) => client.request('PATCH', `${USERS}/${t.id}`, { token: acct.ownerKey, body: { role: 'owner' } })));
    expect(results.every((r) => r.status < 500)).toBe(true);
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: targets[0].key });
    expect(owners.body.pagination.total_count).toBe(1);
    const newOwner = results.findIndex((r) => r.status === 200);
    expect(owners.body.data[0].id).toBe(targets[newOwner].id);
    const former = await client.request('GET', `${USERS}/${acct.ownerId}`, { token: targets[0].key });
    expect(former.body.role).toBe('admin');
  });

  it('a burst of 150 parallel requests on a free account gets exactly 100 non-429 answers in one window', async () => {
    // Start early in a calendar minute so the whole burst falls into one window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 200);
    const acct = await createTestAccount('free');
    const results = await Promise.all(Array.from({ length: 150 }, () => client.request('GET', `${USERS}/me`, { token: acct.ownerKey })));
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status !== 429)).toHaveLength(100);
    expect(limited).toHaveLength(50);
    for (const r of limited) {
      expect(r.body.error.code).toBe('rate_limit_exceeded');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-limit')).toBe('100');
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    const reset = Number(results[0].headers.get('x-ratelimit-reset'));
    expect(reset % 60).toBe(0);
    expect(reset * 1000).toBeGreaterThan(Date.now());
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const helpdesk = await client.request('GET', '/helpdesk/api/v1/tickets', { token: acct.ownerKey });
    expect(helpdesk.status).toBe(429);
    expect(helpdesk.body).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
  }, 90_000);

  it('puts X-RateLimit-* headers on every authenticated answer, errors included', async () => {
    const acct = await createTestAccount('paid');
    for (const [method, path] of [['GET', `${USERS}/me`], ['GET', `${USERS}/usr_nope`], ['GET', `${USERS}?limit=0`], ['DELETE', `${USERS}/${acct.ownerId}`]]) {
      const res = await client.request(method, path, { token: acct.ownerKey });
      expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
      expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeLessThan(1000);
      expect(Number(res.headers.get('x-ratelimit-reset')) % 60).toBe(0);
    }
  });
});
