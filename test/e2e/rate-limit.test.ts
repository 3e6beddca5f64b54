import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway, type Response } from '../support/api.ts';
import { expectUserError, nextMinuteBoundary, rateLimitHeaders, USERS } from '../support/users.ts';

const { client } = useGateway();

/** Headers of an authenticated answer: the plan's limit, a plausible remaining count, Reset at the next minute boundary. */
function expectRateLimitHeaders(res: Response, limit: number, before: number, after: number, label: string) {
  const h = rateLimitHeaders(res);
  expect(h.limit, `${label}: X-RateLimit-Limit`).toBe(limit);
  expect(Number.isInteger(h.remaining) && h.remaining >= 0 && h.remaining < limit, `${label}: X-RateLimit-Remaining ${h.remaining}`).toBe(true);
  expect([nextMinuteBoundary(before), nextMinuteBoundary(after)], `${label}: X-RateLimit-Reset ${h.reset}`).toContain(h.reset);
}

describe('rate limits (decisions §4)', () => {
  it('puts X-RateLimit-Limit/Remaining/Reset on every authenticated answer: successes and 4xx after authentication', async () => {
    const acct = await createTestAccount('paid');
    const viewer = await acct.addUser('viewer');
    const session = await acct.session(acct.ownerId);
    const member = await acct.addUser('member');
    const email = uniqueEmail('hdr');
    const calls: [string, string, string, { body?: unknown; rawBody?: string }, number][] = [
      ['GET', USERS, acct.ownerKey, {}, 200],
      ['GET', `${USERS}/me`, session, {}, 200],
      ['GET', `${USERS}/${member.id}`, viewer.key, {}, 200],
      ['POST', USERS, acct.ownerKey, { body: { email, name: 'H' } }, 201],
      ['PATCH', `${USERS}/${member.id}`, acct.ownerKey, { body: { name: 'Renamed' } }, 200],
      ['GET', `${USERS}?limit=0`, acct.ownerKey, {}, 400],
      ['GET', `${USERS}?cursor=garbage`, acct.ownerKey, {}, 400],
      ['POST', USERS, acct.ownerKey, { rawBody: '{"email":' }, 400],
      ['POST', USERS, acct.ownerKey, { body: { email: 'bad', name: 'H' } }, 400],
      ['POST', USERS, viewer.key, { body: { email: uniqueEmail(), name: 'H' } }, 403],
      ['GET', `${USERS}/usr_01J000000000000000000NOONE`, acct.ownerKey, {}, 404],
      ['POST', USERS, acct.ownerKey, { body: { email, name: 'Again' } }, 409],
      ['DELETE', `${USERS}/${acct.ownerId}`, acct.ownerKey, {}, 409],
      ['POST', USERS, acct.ownerKey, { rawBody: JSON.stringify({ email: 'big@example.com', name: 'x'.repeat(1024 * 1024 + 10) }) }, 413],
      ['DELETE', `${USERS}/${member.id}`, acct.ownerKey, {}, 204],
    ];
    for (const [method, path, token, opts, status] of calls) {
      const before = Date.now();
      const res = await client.request(method, path, { token, ...opts });
      const label = `${method} ${path.slice(0, 60)} -> ${res.status}`;
      expect(res.status, label).toBe(status);
      expectRateLimitHeaders(res, 1000, before, Date.now(), label);
    }
  });

  it('counts down X-RateLimit-Remaining by one per request of the account, across its credentials', async () => {
    const acct = await createTestAccount('enterprise');
    const member = await acct.addUser('member');
    const first = await client.request('GET', `${USERS}/me`, { token: acct.ownerKey });
    const second = await client.request('GET', `${USERS}/me`, { token: member.key });
    const third = await client.request('GET', '/helpdesk/api/v1/tickets', { token: acct.ownerKey });
    const [a, b, c] = [first, second, third].map(rateLimitHeaders);
    expect(a.limit).toBe(10_000);
    // Skip the check in the rare case the three requests straddle a minute boundary.
    if (a.reset === c.reset) expect([b.remaining, c.remaining]).toEqual([a.remaining - 1, a.remaining - 2]);
    expect(a.remaining).toBeLessThan(10_000);
  });

  it('a burst of 150 parallel requests on a FREE account gets exactly 100 non-429 answers and 50 × 429 in one window', async () => {
    // The burst must fall into one calendar minute: if fewer than 12 s remain, wait for the next minute.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 12_000) await sleep(left + 250);
    const acct = await createTestAccount('free');
    const member = await acct.addUser('member');
    const session = await acct.session(member.id);
    const bystander = await createTestAccount('free');
    // Every credential of the account and both interfaces share the one count.
    const shots = Array.from({ length: 150 }, (_, i) => {
      if (i % 5 === 0) return client.request('GET', '/helpdesk/api/v1/tickets', { token: acct.ownerKey });
      if (i % 5 === 1) return client.request('GET', USERS, { token: session });
      if (i % 5 === 2) return client.request('GET', `${USERS}/me`, { token: member.key });
      return client.request('GET', `${USERS}/me`, { token: acct.ownerKey });
    });

    const started = Date.now();
    const results = await Promise.all(shots);

    const resets = new Set(results.map((r) => r.headers.get('x-ratelimit-reset')));
    expect(resets.size, 'the burst must fall into one window').toBe(1);
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status !== 429).map((r) => r.status)).toEqual(Array(100).fill(200));
    expect(limited).toHaveLength(50);
    const reset = Number([...resets][0]);
    expect(reset).toBe(nextMinuteBoundary(started));
    for (const [i, r] of results.entries()) {
      if (r.status !== 429) continue;
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(Math.abs(Math.floor(Date.now() / 1000) + retryAfter - reset)).toBeLessThanOrEqual(2);
      expect(rateLimitHeaders(r)).toEqual({ limit: 100, remaining: 0, reset });
      if (i % 5 === 0) expect(r.body).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: expect.any(String) } });
      else expectUserError(r, 429, 'rate_limit_exceeded');
    }
    const remaining = results
      .filter((r) => r.status === 200)
      .map((r) => rateLimitHeaders(r).remaining)
      .sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Another account is not affected.
    const other = await client.request('GET', `${USERS}/me`, { token: bystander.ownerKey });
    expect(other.status).toBe(200);
  }, 90_000);

  it('answers 429 in the user-management envelope with Retry-After once the window is used up', async () => {
    const acct = await createTestAccount('free');
    const { consume } = await import('#shared/ratelimit/limiter.ts');
    // Use up the window through the limiter itself (fast), then ask once more over HTTP.
    const left = 60_000 - (Date.now() % 60_000);
    if (left < 3_000) await sleep(left + 250);
    await Promise.all(Array.from({ length: 100 }, () => consume(acct.accountId, 'free').catch(() => undefined)));

    const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email: uniqueEmail(), name: 'Late' } });

    expectUserError(res, 429, 'rate_limit_exceeded');
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(rateLimitHeaders(res)).toMatchObject({ limit: 100, remaining: 0 });
    const list = await client.request('GET', `${USERS}?search=late`, { token: acct.ownerKey });
    expect(list.status).toBe(429);
  });
});
