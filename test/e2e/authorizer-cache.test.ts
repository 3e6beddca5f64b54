import { beforeAll, describe, expect, it } from 'vitest';
import * as accounts from '#shared/accounts/service.ts';
import * as accountsRepo from '#shared/accounts/repository.ts';
import { PLAN_LIMITS } from '#shared/auth/principal.ts';
import * as usersRepo from '#shared/users/repository.ts';
import type { LocalLambda } from '../../local/lambda/index.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { localLambda } from '../support/lambda.ts';
import { expectUserError, USERS } from '../support/users.ts';

// The production shape (issue #21): the authorizer's answer cached per Authorization header for the template's TTL.
const TTL = 300;
const { client } = useGateway({ authorizerCacheTtlSeconds: TTL });
const ME = `${USERS}/me`;
let lambda: LocalLambda;

beforeAll(async () => {
  // This process revokes keys and changes plans as the admin CLI does: it flushes the same local control plane
  // (useGateway points this process's flushes at it).
  lambda = await localLambda();
});

describe('authorizer cache (stage default 300 s)', () => {
  it('serves a repeated credential from the cache: a change stored without a flush is not seen', async () => {
    // Arrange
    const acct = await createTestAccount();
    const temp = await accounts.createApiKey(acct.accountId, acct.ownerId, 'temp');
    expect((await client.request('GET', ME, { token: temp.apiKey })).status).toBe(200);
    // Act: revoke in the store only, as if the flush were lost
    const key = (await accountsRepo.getApiKey(acct.accountId, temp.id))!;
    await accountsRepo.revokeApiKey(key, await usersRepo.getUser(acct.accountId, acct.ownerId, true));
    // Assert: the cached answer still stands (this is what the flush is for)
    expect((await client.request('GET', ME, { token: temp.apiKey })).status).toBe(200);
  });

  it('refuses a revoked key on its very next request (revoke-api-key flushes)', async () => {
    // Arrange
    const acct = await createTestAccount();
    const temp = await accounts.createApiKey(acct.accountId, acct.ownerId, 'temp');
    expect((await client.request('GET', ME, { token: temp.apiKey })).status).toBe(200);
    const flushes = lambda.apiGateway.flushes;
    // Act
    await accounts.revokeApiKey(acct.accountId, temp.id);
    // Assert
    expect(lambda.apiGateway.flushes).toBe(flushes + 1);
    expectUserError(await client.request('GET', ME, { token: temp.apiKey }), 401, 'unauthorized');
    expect((await client.request('GET', ME, { token: acct.ownerKey })).status).toBe(200);
  });

  it("refuses a suspended user's key and session token on their very next request (the users function flushes)", async () => {
    // Arrange
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const token = await acct.session(member.id);
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(200);
    expect((await client.request('GET', ME, { token })).status).toBe(200);
    // Act
    const suspended = await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
    // Assert
    expect(suspended.status).toBe(200);
    expectUserError(await client.request('GET', ME, { token: member.key }), 401, 'unauthorized');
    expectUserError(await client.request('GET', ME, { token }), 401, 'unauthorized');
  });

  it("refuses a deleted user's key on its very next request", async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(200);
    expect((await client.request('DELETE', `${USERS}/${member.id}`, { token: acct.ownerKey })).status).toBe(204);
    expectUserError(await client.request('GET', ME, { token: member.key }), 401, 'unauthorized');
  });

  it('limits a demoted admin on the very next request: 403 where the admin role was needed', async () => {
    // Arrange
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    expect((await client.request('PATCH', `${USERS}/${member.id}`, { token: admin.key, body: { name: 'Renamed once' } })).status).toBe(200);
    // Act
    expect((await client.request('PATCH', `${USERS}/${admin.id}`, { token: acct.ownerKey, body: { role: 'viewer' } })).status).toBe(200);
    // Assert
    expectUserError(await client.request('PATCH', `${USERS}/${member.id}`, { token: admin.key, body: { name: 'Renamed twice' } }), 403, 'forbidden');
    expect((await client.request('GET', ME, { token: admin.key })).body).toMatchObject({ role: 'viewer' });
  });

  it("applies a new plan's limit on the account's very next request (set-plan flushes)", async () => {
    const acct = await createTestAccount('enterprise');
    expect((await client.request('GET', ME, { token: acct.ownerKey })).headers.get('x-ratelimit-limit')).toBe(String(PLAN_LIMITS.enterprise));
    await accounts.setPlan(acct.accountId, 'free');
    expect((await client.request('GET', ME, { token: acct.ownerKey })).headers.get('x-ratelimit-limit')).toBe(String(PLAN_LIMITS.free));
  });

  it("answers a request without the Authorization header itself, as API Gateway does with a cache: 401 in the path's envelope", async () => {
    const playbook = await client.request('GET', ME);
    expect(playbook.status).toBe(401);
    expect(playbook.body).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('Missing credentials') } });
    const helpdesk = await client.request('GET', '/helpdesk/api/v1/tickets');
    expect(helpdesk.status).toBe(401);
    expect(helpdesk.body).toEqual({ success: false, error: { code: 'UNAUTHORIZED', message: expect.stringContaining('Missing credentials') } });
  });
});

describe('authorizer cache of a long-running stack', () => {
  it('drops expired answers once per TTL: it holds the credentials of one TTL, not every header seen since the last flush', async () => {
    // Arrange: a gateway of its own whose answers live one second, and three refused credentials in its cache.
    const acct = await createTestAccount();
    const { startGateway } = await import('../../local/gateway.ts');
    const gw = await startGateway(0, lambda, { authorizerCacheTtlSeconds: 1 });
    try {
      const get = (token: string) => fetch(gw.url + ME, { headers: { Authorization: `Bearer ${token}` } });
      for (const n of [1, 2, 3]) expect((await get(`sk_not_a_key_${n}`)).status).toBe(401);
      expect(gw.cachedAnswers()).toBe(3);

      // Act: another credential, once the three have expired.
      await new Promise((r) => setTimeout(r, 1_100));
      expect((await get(acct.ownerKey)).status).toBe(200);

      // Assert: the expired answers went as the new one came in.
      expect(gw.cachedAnswers()).toBe(1);
    } finally {
      await gw.close();
    }
  });
});
