import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { hourStart } from '#shared/auth/api-keys.ts';
import type { LocalLambda } from '../../local/lambda/index.ts';
import { createTestAccount, useGateway, type Client, type TestAccount } from '../support/api.ts';
import { expectDeskError, must, TICKETS } from '../support/helpdesk.ts';
import { localLambda } from '../support/lambda.ts';
import { runScript } from '../support/processes.ts';
import { expectUserError, USERS } from '../support/users.ts';
import { clockPast } from '../support/wait.ts';

/**
 * What a scoped or expiring API key may do (decisions §18), with the
 * authorizer cache on (the stage default, 300 s) and off: scopes and expiry
 * are checked on every request, so a cached authorizer answer cannot outlive
 * a key's expiry nor widen its scopes; revocation applies on the next request;
 * last_used_at is recorded; the admin CLI takes --scopes and --expires-at.
 */
const TTL = 300;
const cached = useGateway({ authorizerCacheTtlSeconds: TTL });
const uncached = useGateway({ authorizerCacheTtlSeconds: 0 });

const KEYS = '/playbook/api/v1/api-keys';
const ME = `${USERS}/me`;

let lambda: LocalLambda;
let acct: TestAccount;
let ticketPath: string;

/** A key made through the API by the account's owner. */
async function keyWith(body: Record<string, unknown>): Promise<{ id: string; key: string; expires_at: string | null; last_used_at: string | null; created_at: string }> {
  return must(await cached.client.request('POST', KEYS, { token: acct.ownerKey, body: { name: 'scoped', ...body } }), 201, 'create key');
}

const listed = async (client: Client, id: string) => (await client.request('GET', KEYS, { token: acct.ownerKey })).body.data.find((k: { id: string }) => k.id === id);

beforeAll(async () => {
  // The users function flushes the cache-on gateway on revocation, as API Gateway's control plane would be flushed.
  lambda = await localLambda();
  acct = await createTestAccount();
  const created = must(await cached.client.request('POST', TICKETS, { token: acct.ownerKey, body: { ticket: { subject: 'Scoped' } } }), 201, 'ticket');
  ticketPath = `${TICKETS}/${created.ticket.id}`;
  // Warm every function this file calls through both gateways, so a key that lives 2 s is used in time.
  for (const gw of [cached, uncached]) {
    must(await gw.client.request('GET', ME, { token: acct.ownerKey }), 200, 'warm users');
    must(await gw.client.request('GET', ticketPath, { token: acct.ownerKey }), 200, 'warm tickets');
  }
});

describe('scopes, with the authorizer cache on', () => {
  it('lets a desk:read key GET the desk and refuses its PUT with 403 naming desk:write, in the desk envelope', async () => {
    // Arrange
    const { key } = await keyWith({ scopes: ['desk:read'] });
    // Act
    const read = await cached.client.request('GET', ticketPath, { token: key });
    const write = await cached.client.request('PUT', ticketPath, { token: key, body: { ticket: { priority: 'high' } } });
    const users = await cached.client.request('GET', ME, { token: key });
    // Assert
    expect(read.status, read.text).toBe(200);
    expectDeskError(write, 403, 'FORBIDDEN');
    expect(write.body.error.message).toContain('desk:write');
    expectUserError(users, 403, 'forbidden');
    expect(users.body.error.message).toContain('users:read');
    // Nothing changed; the owner's full key still writes.
    expect((await cached.client.request('GET', ticketPath, { token: acct.ownerKey })).body.ticket.priority).not.toBe('high');
    expect((await cached.client.request('PUT', ticketPath, { token: acct.ownerKey, body: { ticket: { tags: ['scoped'] } } })).status).toBe(200);
  });

  it('refuses a users:read key on /helpdesk (403) and lets it read users but not write them', async () => {
    const { key } = await keyWith({ scopes: ['users:read'] });
    const desk = await cached.client.request('GET', ticketPath, { token: key });
    expectDeskError(desk, 403, 'FORBIDDEN');
    expect(desk.body.error.message).toContain('desk:read');
    expect((await cached.client.request('GET', ME, { token: key })).status).toBe(200);
    const patch = await cached.client.request('PATCH', `${USERS}/${acct.ownerId}`, { token: key, body: { name: 'Renamed' } });
    expectUserError(patch, 403, 'forbidden');
    expect(patch.body.error.message).toContain('users:write');
  });

  it('keeps a key within its role: a desk:write key of a viewer still cannot write', async () => {
    const viewer = await acct.addUser('viewer');
    const { key } = await keyWith({ scopes: ['desk:read', 'desk:write'], user_id: viewer.id });
    expect((await cached.client.request('GET', ticketPath, { token: key })).status).toBe(200);
    expectDeskError(await cached.client.request('PUT', ticketPath, { token: key, body: { ticket: { priority: 'low' } } }), 403, 'FORBIDDEN');
  });
});

describe('expiry', () => {
  it('refuses a key that has expired with 401 saying so: on the answer the cache kept from before, and afresh', async () => {
    // Arrange: a key that lives 2 s, used (and so cached) while it lives
    const made = await keyWith({ scopes: ['desk:read', 'users:read'], expires_at: new Date(Date.now() + 2_000).toISOString() });
    expect((await cached.client.request('GET', ticketPath, { token: made.key })).status).toBe(200);
    expect((await cached.client.request('GET', ME, { token: made.key })).status).toBe(200);
    expect((await uncached.client.request('GET', ME, { token: made.key })).status).toBe(200);
    // Act: wait until the clock passes the expiry
    await clockPast(made.expires_at!);
    const fromCache = await cached.client.request('GET', ME, { token: made.key });
    const deskFromCache = await cached.client.request('GET', ticketPath, { token: made.key });
    const afresh = await uncached.client.request('GET', ME, { token: made.key });
    // Assert
    for (const res of [fromCache, afresh]) {
      expectUserError(res, 401, 'unauthorized');
      expect(res.body.error.message).toMatch(/expired/);
    }
    expectDeskError(deskFromCache, 401, 'UNAUTHORIZED');
    expect(deskFromCache.body.error.message).toMatch(/expired/);
    // Still listed (until revoked), with its expiry.
    expect(await listed(cached.client, made.id)).toMatchObject({ expires_at: made.expires_at });
  });
});

describe('revocation with the authorizer cache on', () => {
  it('refuses a key revoked through the API on its very next request (the revoke flushes the cache)', async () => {
    // Arrange
    const member = await acct.addUser('member');
    const made = must(await cached.client.request('POST', KEYS, { token: member.key, body: { name: 'to revoke' } }), 201, 'create');
    expect((await cached.client.request('GET', ME, { token: made.key })).status).toBe(200);
    expect((await cached.client.request('GET', ticketPath, { token: made.key })).status).toBe(200);
    const flushes = lambda.apiGateway.flushes;
    // Act
    const revoked = await cached.client.request('DELETE', `${KEYS}/${made.id}`, { token: member.key });
    // Assert
    expect(revoked.status, revoked.text).toBe(204);
    expect(lambda.apiGateway.flushes).toBeGreaterThan(flushes);
    expectUserError(await cached.client.request('GET', ME, { token: made.key }), 401, 'unauthorized');
    expectDeskError(await cached.client.request('GET', ticketPath, { token: made.key }), 401, 'UNAUTHORIZED');
    expect((await cached.client.request('GET', ME, { token: member.key })).status).toBe(200);
  });
});

describe('last_used_at', () => {
  it('is null until the key is used, then set to the time of its first use in the hour, and not moved by later uses that hour', async () => {
    // Arrange
    const made = await keyWith({ scopes: ['users:read'] });
    expect(made.last_used_at).toBeNull();
    expect((await listed(uncached.client, made.id)).last_used_at).toBeNull();
    // Act
    const before = new Date().toISOString();
    expect((await uncached.client.request('GET', ME, { token: made.key })).status).toBe(200);
    const after = new Date().toISOString();
    const first = (await listed(uncached.client, made.id)).last_used_at;
    expect((await uncached.client.request('GET', ME, { token: made.key })).status).toBe(200);
    const second = (await listed(uncached.client, made.id)).last_used_at;
    // Assert
    expect(first >= before && first <= after, `${first} within [${before}, ${after}]`).toBe(true);
    // Unless the hour turned between the two uses.
    if (hourStart(Date.parse(after)) === hourStart(Date.now())) expect(second).toBe(first);
  });
});

// Side by side: each test is one run of the CLI (a process of its own, most of it starting up) on its own key.
describe.concurrent('admin CLI create-api-key', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-cli-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const admin = (...args: string[]) => runScript('scripts/admin.ts', args, { DYNAMODB_PORT: new URL(inject('dynamodbEndpoint')).port, DATA_DIR: dataDir });

  it('takes --scopes and --expires-at and prints id, name and apiKey with the scopes and the expiry', async () => {
    // Arrange
    const expiresAt = new Date(Date.now() + 7 * 86_400_000).toISOString();
    // Act
    const out = await admin('create-api-key', '--account', acct.accountId, '--user', acct.ownerId, '--name', 'warehouse', '--scopes', 'desk:read, users:read', '--expires-at', expiresAt);
    // Assert
    expect(out.code, out.stderr).toBe(0);
    const printed = JSON.parse(out.stdout);
    expect(printed).toEqual({ id: expect.stringMatching(/^key_/), name: 'warehouse', apiKey: expect.stringMatching(/^sk_/), scopes: ['users:read', 'desk:read'], expiresAt });
    expect((await uncached.client.request('GET', ticketPath, { token: printed.apiKey })).status).toBe(200);
    expectDeskError(await uncached.client.request('PUT', ticketPath, { token: printed.apiKey, body: { ticket: { priority: 'low' } } }), 403, 'FORBIDDEN');
    expect(await listed(uncached.client, printed.id)).toMatchObject({ scopes: ['users:read', 'desk:read'], expires_at: expiresAt });
  });

  it.each([
    ['an unknown scope', ['--scopes', 'desk:read,desk:delete'], /--scopes/],
    ['an expiry in the past', ['--expires-at', '2001-01-01T00:00:00Z'], /--expires-at must be in the future/],
    ['an expiry over a year ahead', ['--expires-at', new Date(Date.now() + 400 * 86_400_000).toISOString()], /--expires-at must be at most 1 year ahead/],
  ])('refuses %s on stderr, printing nothing', async (_case, args, message) => {
    const out = await admin('create-api-key', '--account', acct.accountId, '--user', acct.ownerId, ...args);
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toMatch(message);
  });
});
