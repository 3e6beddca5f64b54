import { gunzipSync } from 'node:zlib';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { ddb, tableName } from '#shared/db/client.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { must } from '../support/helpdesk.ts';
import { expectUserError, USERS } from '../support/users.ts';

/**
 * API keys of the user-management interface (decisions §18): create, list,
 * revoke, who may manage which keys, and the validation of the create body,
 * through the local gateway (authorizer cache off; the cache-on behaviour is in
 * api-keys-scopes.test.ts).
 */
const { client } = useGateway({ authorizerCacheTtlSeconds: 0 });

const KEYS = '/playbook/api/v1/api-keys';
const ME = `${USERS}/me`;
const ALL_SCOPES = ['users:read', 'users:write', 'desk:read', 'desk:write'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

/** Every item of an account's partition as text, compressed values unpacked: what the store holds for it. */
async function accountItemsText(accountId: string): Promise<string> {
  const out = await ddb.send(new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `A#${accountId}` }, ConsistentRead: true }));
  expect(out.LastEvaluatedKey).toBeUndefined();
  expect(out.Items?.some((i) => String(i.sk).startsWith('IDEMP#'))).toBe(true);
  return JSON.stringify(out.Items, (_k, v) => (v instanceof Uint8Array ? gunzipSync(v).toString('utf8') : v));
}

const create = (token: string, body: Record<string, unknown>, headers: Record<string, string> = {}) => client.request('POST', KEYS, { token, body, headers });

describe('POST /api-keys', () => {
  it('creates a key for the caller with every scope and no expiry, shows the key once, and the key works', async () => {
    // Arrange
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    // Act
    const res = await create(member.key, { name: 'laptop' });
    // Assert
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^key_/),
      name: 'laptop',
      scopes: ALL_SCOPES,
      expires_at: null,
      created_at: expect.stringMatching(ISO),
      last_used_at: null,
      user_id: member.id,
      key: expect.stringMatching(/^sk_[0-9A-Za-z]{40}$/),
    });
    const me = await client.request('GET', ME, { token: res.body.key });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: member.id, role: 'member' });
    const listed = await client.request('GET', KEYS, { token: member.key });
    expect(listed.body.data.find((k: { id: string }) => k.id === res.body.id)).not.toHaveProperty('key');
  });

  it('creates a key with scopes (in a fixed order, once each) and an expiry, for another user when the caller is an admin', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const viewer = await acct.addUser('viewer');
    const expires = inDays(30);
    const res = await create(admin.key, { name: 'sync', scopes: ['desk:read', 'users:read', 'desk:read'], expires_at: expires, user_id: viewer.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({ scopes: ['users:read', 'desk:read'], expires_at: expires, user_id: viewer.id });
    // The key acts as its user, with that user's role.
    expect((await client.request('GET', ME, { token: res.body.key })).body).toMatchObject({ id: viewer.id, role: 'viewer' });
  });

  it.each([
    ['scopes empty', { scopes: [] }, 'scopes'],
    ['an unknown scope', { scopes: ['desk:read', 'tickets:delete'] }, 'scopes'],
    ['scopes not a list', { scopes: 'desk:read' }, 'scopes'],
    ['expires_at in the past', { expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    ['expires_at more than a year ahead', { expires_at: inDays(367) }, 'expires_at'],
    ['expires_at not a time', { expires_at: 'tomorrow' }, 'expires_at'],
    ['no name', { name: undefined }, 'name'],
  ])('answers 400 validation_error naming the field for %s', async (_case, change, field) => {
    const acct = await createTestAccount();
    const res = await create(acct.ownerKey, { name: 'bad', ...change });
    expectUserError(res, 400, 'validation_error', field);
  });

  it('answers 400 naming user_id when a member asks for a key of another user, and 400 for a user of another account', async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const other = await createTestAccount();
    expectUserError(await create(member.key, { name: 'theirs', user_id: acct.ownerId }), 400, 'validation_error', 'user_id');
    expectUserError(await create(acct.ownerKey, { name: 'elsewhere', user_id: other.ownerId }), 400, 'validation_error', 'user_id');
    // A member may name themselves.
    expect((await create(member.key, { name: 'mine', user_id: member.id })).status).toBe(201);
  });

  it('refuses an admin a key that would act as the owner (403)', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    expectUserError(await create(admin.key, { name: 'as owner', user_id: acct.ownerId }), 403, 'forbidden');
  });

  it('lets a scoped key create keys only within its own scopes (403 naming what it lacks), and needs users:write', async () => {
    // Arrange
    const acct = await createTestAccount();
    const writer = (await create(acct.ownerKey, { name: 'writer', scopes: ['users:write', 'desk:read'] })).body.key;
    const reader = (await create(acct.ownerKey, { name: 'reader', scopes: ['users:read', 'desk:read'] })).body.key;
    // Act
    const broader = await create(writer, { name: 'broader', scopes: ['users:write', 'desk:write'] });
    const byDefault = await create(writer, { name: 'all four' });
    const within = await create(writer, { name: 'narrower', scopes: ['desk:read'] });
    const fromReader = await create(reader, { name: 'any', scopes: ['desk:read'] });
    // Assert
    expectUserError(broader, 403, 'forbidden');
    expect(broader.body.error.message).toContain('desk:write');
    expectUserError(byDefault, 403, 'forbidden');
    expect(byDefault.body.error.message).toMatch(/users:read.*desk:write/);
    expect(within.status, within.text).toBe(201);
    expect(within.body.scopes).toEqual(['desk:read']);
    expectUserError(fromReader, 403, 'forbidden');
    expect(fromReader.body.error.message).toContain('users:write');
    // Listing and revoking are key management too.
    expectUserError(await client.request('GET', KEYS, { token: reader }), 403, 'forbidden');
    expectUserError(await client.request('DELETE', `${KEYS}/${within.body.id}`, { token: reader }), 403, 'forbidden');
  });

  it('lets a key that expires create only keys that expire no later than it (422 naming expires_at otherwise)', async () => {
    // Arrange: an admin's key that expires in 7 days
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const expiring = must(await create(admin.key, { name: 'expiring', expires_at: inDays(7) }), 201, 'expiring key');
    // Act
    const forever = await create(expiring.key, { name: 'forever', expires_at: null });
    const unset = await create(expiring.key, { name: 'unset' });
    const later = await create(expiring.key, { name: 'later', expires_at: new Date(Date.parse(expiring.expires_at) + 1000).toISOString() });
    const same = await create(expiring.key, { name: 'same', expires_at: expiring.expires_at });
    const sooner = await create(expiring.key, { name: 'sooner', expires_at: inDays(1) });
    // Assert
    for (const res of [forever, unset, later]) {
      expectUserError(res, 422, 'validation_error', 'expires_at');
      expect(res.body.error.message).toContain(expiring.expires_at);
    }
    expect(same.status, same.text).toBe(201);
    expect(same.body.expires_at).toBe(expiring.expires_at);
    expect(sooner.status, sooner.text).toBe(201);
    // A key that never expires, and a session token, may still create keys that never expire.
    expect((await create(admin.key, { name: 'forever' })).status).toBe(201);
    expect((await create(await acct.session(admin.id), { name: 'unset' })).status).toBe(201);
    const names = (await client.request('GET', KEYS, { token: acct.ownerKey })).body.data.map((k: { name: string }) => k.name);
    expect(names.filter((n: string) => ['forever', 'unset', 'later', 'same', 'sooner'].includes(n)).sort()).toEqual(['forever', 'same', 'sooner', 'unset']);
  });

  it('answers a repeat under the same Idempotency-Key with the first answer, without the key, which is never stored', async () => {
    const acct = await createTestAccount();
    const headers = { 'Idempotency-Key': `key-${Date.now()}` };
    const first = await create(acct.ownerKey, { name: 'once' }, headers);
    const again = await create(acct.ownerKey, { name: 'once' }, headers);
    expect(first.status, first.text).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    const { key, ...shown } = first.body;
    expect(key).toMatch(/^sk_/);
    expect(again.body).toEqual(shown);
    const listed = (await client.request('GET', KEYS, { token: acct.ownerKey })).body.data;
    expect(listed.filter((k: { name: string }) => k.name === 'once')).toHaveLength(1);
    // No item of the account holds the key, the kept answer (gzip-compressed) included.
    expect(await accountItemsText(acct.accountId)).not.toContain(key);
  });
});

describe('GET /api-keys', () => {
  it('lists newest first: an admin every live key of the account, a member only their own; revoked keys leave the list', async () => {
    // Arrange
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    const mine = (await create(member.key, { name: 'member second' })).body;
    const other = (await create(admin.key, { name: 'admin second' })).body;
    const revoked = (await create(member.key, { name: 'member revoked' })).body;
    expect((await client.request('DELETE', `${KEYS}/${revoked.id}`, { token: member.key })).status).toBe(204);
    // Act
    const byAdmin = await client.request('GET', KEYS, { token: admin.key });
    const byMember = await client.request('GET', KEYS, { token: member.key });
    // Assert
    expect(byAdmin.status, byAdmin.text).toBe(200);
    const names = (res: typeof byAdmin) => res.body.data.map((k: { name: string }) => k.name);
    // createTestAccount gave the owner 'Owner key', and each added user a 'test' key.
    expect(names(byAdmin)).toEqual(['admin second', 'member second', 'test', 'test', 'Owner key']);
    expect(names(byMember)).toEqual(['member second', 'test']);
    expect(byMember.body.data.every((k: { user_id: string }) => k.user_id === member.id)).toBe(true);
    expect(byAdmin.body.data.find((k: { id: string }) => k.id === other.id)).toEqual({ ...other, key: undefined });
    expect(byMember.body.data[0]).toEqual({ id: mine.id, name: 'member second', scopes: ALL_SCOPES, expires_at: null, created_at: mine.created_at, last_used_at: null, user_id: member.id });
    expect(JSON.stringify(byAdmin.body)).not.toContain('sk_');
  });
});

describe('DELETE /api-keys/{id}', () => {
  it('revokes a key at once (204), and the key is refused on its next request', async () => {
    const acct = await createTestAccount();
    const made = (await create(acct.ownerKey, { name: 'short-lived' })).body;
    expect((await client.request('GET', ME, { token: made.key })).status).toBe(200);
    expect((await client.request('DELETE', `${KEYS}/${made.id}`, { token: acct.ownerKey })).status).toBe(204);
    expectUserError(await client.request('GET', ME, { token: made.key }), 401, 'unauthorized');
    // Revoked: not found again.
    expectUserError(await client.request('DELETE', `${KEYS}/${made.id}`, { token: acct.ownerKey }), 404, 'resource_not_found');
  });

  it("answers 404 for another account's key, and for another user's key unless the caller is an owner or admin", async () => {
    // Arrange
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    const viewer = await acct.addUser('viewer');
    const other = await createTestAccount();
    const theirs = (await create(other.ownerKey, { name: 'theirs' })).body;
    const members = (await create(member.key, { name: 'members' })).body;
    // Act / Assert
    expectUserError(await client.request('DELETE', `${KEYS}/${theirs.id}`, { token: acct.ownerKey }), 404, 'resource_not_found');
    expect((await client.request('GET', ME, { token: theirs.key })).status).toBe(200);
    expectUserError(await client.request('DELETE', `${KEYS}/${members.id}`, { token: viewer.key }), 404, 'resource_not_found');
    expect((await client.request('GET', ME, { token: members.key })).status).toBe(200);
    expect((await client.request('DELETE', `${KEYS}/${members.id}`, { token: admin.key })).status).toBe(204);
    expectUserError(await client.request('GET', ME, { token: members.key }), 401, 'unauthorized');
    expectUserError(await client.request('DELETE', `${KEYS}/key_${'0'.repeat(26)}`, { token: acct.ownerKey }), 404, 'resource_not_found');
  });

  it('works with a session token (every scope)', async () => {
    const acct = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    const made = await create(token, { name: 'from a session', scopes: ['desk:read'] });
    expect(made.status, made.text).toBe(201);
    expect((await client.request('DELETE', `${KEYS}/${made.body.id}`, { token })).status).toBe(204);
  });
});
