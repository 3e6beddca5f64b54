import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import * as accounts from '#shared/accounts/service.ts';
import { signSessionToken } from '#shared/auth/jwt.ts';
import { createTestAccount, uniqueEmail, useGateway } from '../support/api.ts';
import { expectUserError, USERS } from '../support/users.ts';

const { client } = useGateway();
const ME = `${USERS}/me`;
const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

describe('authentication: missing, malformed and unknown credentials (decisions §1)', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a bare Bearer', 'Bearer'],
    ['Bearer with only spaces', 'Bearer    '],
    ['a key without the scheme', 'sk_' + 'A'.repeat(40)],
    ['two credentials', `Bearer sk_${'A'.repeat(40)} sk_${'B'.repeat(40)}`],
    ['a too-short key', 'Bearer sk_short'],
    ['an unknown well-formed key', `Bearer sk_${'x'.repeat(40)}`],
    ['a string that is no JWT', 'Bearer not.a.jwt'],
    ['a 10k-character credential', `Bearer ${'a'.repeat(10_000)}`],
  ])('answers 401 unauthorized for %s', async (_label, header) => {
    // Arrange
    const headers: Record<string, string> = header === undefined ? {} : { Authorization: header };
    // Act
    const res = await client.request('GET', ME, { headers });
    // Assert
    expectUserError(res, 401, 'unauthorized');
  });

  it('answers 401 on every user endpoint without credentials, and nothing is written', async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const email = uniqueEmail('anon');
    const calls: [string, string, unknown?][] = [
      ['GET', USERS],
      ['GET', ME],
      ['GET', `${USERS}/${member.id}`],
      ['POST', USERS, { email, name: 'Anon' }],
      ['PATCH', `${USERS}/${member.id}`, { name: 'Hijacked', role: 'admin' }],
      ['DELETE', `${USERS}/${member.id}`],
    ];

    for (const [method, path, body] of calls) {
      const res = await client.request(method, path, { body });
      expectUserError(res, 401, 'unauthorized');
    }

    const after = await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey });
    expect(after.body).toMatchObject({ name: 'member person', role: 'member' });
    const created = await client.request('GET', `${USERS}?search=${encodeURIComponent(email)}`, { token: acct.ownerKey });
    expect(created.body.pagination.total_count).toBe(0);
  });

  it('checks credentials before the body: an anonymous malformed POST is 401, not 400', async () => {
    const res = await client.request('POST', USERS, { rawBody: '{"email":' });
    expectUserError(res, 401, 'unauthorized');
  });

  it('accepts the Bearer scheme case-insensitively (RFC 7235)', async () => {
    const acct = await createTestAccount();
    const res = await client.request('GET', ME, { headers: { Authorization: `bearer ${acct.ownerKey}` } });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(acct.ownerId);
  });
});

describe('authentication: API keys', () => {
  it('accepts a key and acts as its user', async () => {
    const acct = await createTestAccount();
    const viewer = await acct.addUser('viewer');
    const res = await client.request('GET', ME, { token: viewer.key });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: viewer.id, role: 'viewer' });
  });

  it('refuses a revoked key with 401 while the user’s other key keeps working', async () => {
    const acct = await createTestAccount();
    const temp = await accounts.createApiKey(acct.accountId, acct.ownerId, 'temp');
    expect((await client.request('GET', ME, { token: temp.apiKey })).status).toBe(200);

    await accounts.revokeApiKey(acct.accountId, temp.id);

    expectUserError(await client.request('GET', ME, { token: temp.apiKey }), 401, 'unauthorized');
    expect((await client.request('GET', ME, { token: acct.ownerKey })).status).toBe(200);
  });
});

describe('authentication: session tokens', () => {
  it('accepts a valid session token as the user it names', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const token = await acct.session(admin.id);
    const res = await client.request('GET', ME, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: admin.id, role: 'admin' });
  });

  it('refuses tampered tokens: changed claims, changed signature, alg none, wrong secret, missing exp', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const now = Math.floor(Date.now() / 1000);
    const foreignSecretSig = createHmac('sha256', 'not-the-deployment-secret').update(`${h}.${p}`).digest('base64url');
    const tampered = [
      `${h}.${b64url({ ...claims, acct: other.accountId, sub: other.ownerId })}.${s}`,
      `${h}.${b64url({ ...claims, exp: claims.exp + 3600 })}.${s}`,
      `${h}.${p}.${s.slice(0, -4)}AAAA`,
      `${h}.${p}.`,
      `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.`,
      `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.${s}`,
      `${h}.${p}.${foreignSecretSig}`,
      `${h}.${p}.${s}.extra`,
    ];
    const { exp: _exp, ...noExp } = { ...claims, iat: now };
    tampered.push(`${h}.${b64url(noExp)}.${s}`);

    for (const t of tampered) expectUserError(await client.request('GET', ME, { token: t }), 401, 'unauthorized');
    expect((await client.request('GET', ME, { token })).status).toBe(200);
  });

  it('refuses an expired token', async () => {
    const acct = await createTestAccount();
    const expired = await signSessionToken(acct.accountId, acct.ownerId, 60, Date.now() - 61_000);
    expectUserError(await client.request('GET', ME, { token: expired.token }), 401, 'unauthorized');
  });

  it('refuses a correctly signed token whose user is not in the named account, or does not exist', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const mismatched = await signSessionToken(other.accountId, acct.ownerId, 600);
    const ghost = await signSessionToken(acct.accountId, 'usr_01J000000000000000000GHOST', 600);
    const noAccount = await signSessionToken('acct_doesnotexist', acct.ownerId, 600);
    for (const t of [mismatched.token, ghost.token, noAccount.token]) expectUserError(await client.request('GET', ME, { token: t }), 401, 'unauthorized');
  });
});

describe('authentication: suspended and deleted users', () => {
  it("refuses a suspended user's key and session token (401), and accepts them again once reactivated", async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const token = await acct.session(member.id);

    const suspended = await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
    expect(suspended.body.status).toBe('suspended');

    expectUserError(await client.request('GET', ME, { token: member.key }), 401, 'unauthorized');
    expectUserError(await client.request('GET', ME, { token }), 401, 'unauthorized');
    expectUserError(await client.request('POST', USERS, { token: member.key, body: { email: uniqueEmail(), name: 'Sneaky' } }), 401, 'unauthorized');

    await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { status: 'active' } });
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(200);
    expect((await client.request('GET', ME, { token })).status).toBe(200);
  });

  it("refuses a deleted user's key and session token (401)", async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const token = await acct.session(member.id);

    expect((await client.request('DELETE', `${USERS}/${member.id}`, { token: acct.ownerKey })).status).toBe(204);

    expectUserError(await client.request('GET', ME, { token: member.key }), 401, 'unauthorized');
    expectUserError(await client.request('GET', USERS, { token }), 401, 'unauthorized');
  });

  it('treats issuing a session token as a login: last_login_at is set and an invited user becomes active', async () => {
    const acct = await createTestAccount();
    const invited = await client.request('POST', USERS, { token: acct.ownerKey, body: { email: uniqueEmail('inv'), name: 'Inv' } });
    expect(invited.body).toMatchObject({ status: 'invited', last_login_at: null });

    await acct.session(invited.body.id);

    const after = await client.request('GET', `${USERS}/${invited.body.id}`, { token: acct.ownerKey });
    expect(after.body.status).toBe('active');
    expect(Date.parse(after.body.last_login_at)).toBeGreaterThanOrEqual(Date.parse(invited.body.created_at));
  });
});

describe('authorization envelope and tenant isolation', () => {
  it('answers 403 as {error: {code: "forbidden", message}}', async () => {
    const acct = await createTestAccount();
    const viewer = await acct.addUser('viewer');
    const res = await client.request('POST', USERS, { token: viewer.key, body: { email: uniqueEmail(), name: 'V' } });
    expectUserError(res, 403, 'forbidden');
  });

  it("answers 404 resource_not_found for another account's user on GET, PATCH and DELETE, and leaves it untouched", async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const bMember = await b.addUser('member');

    for (const id of [b.ownerId, bMember.id]) {
      expectUserError(await client.request('GET', `${USERS}/${id}`, { token: a.ownerKey }), 404, 'resource_not_found');
      expectUserError(await client.request('PATCH', `${USERS}/${id}`, { token: a.ownerKey, body: { name: 'Pwned', status: 'suspended' } }), 404, 'resource_not_found');
      expectUserError(await client.request('DELETE', `${USERS}/${id}`, { token: a.ownerKey }), 404, 'resource_not_found');
    }
    expectUserError(await client.request('PATCH', `${USERS}/${bMember.id}`, { token: a.ownerKey, body: { role: 'owner' } }), 404, 'resource_not_found');

    const seenByB = await client.request('GET', `${USERS}/${bMember.id}`, { token: b.ownerKey });
    expect(seenByB.body).toMatchObject({ name: 'member person', status: 'active', role: 'member' });
    const bOwner = await client.request('GET', `${USERS}/${b.ownerId}`, { token: b.ownerKey });
    expect(bOwner.body.role).toBe('owner');
  });

  it("answers an unknown id the same way as another account's id", async () => {
    const a = await createTestAccount();
    expectUserError(await client.request('GET', `${USERS}/usr_01J000000000000000000NOONE`, { token: a.ownerKey }), 404, 'resource_not_found');
  });

  it("never lists another account's users, whatever the filters", async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const bMember = await b.addUser('member');
    const bEmail = (await client.request('GET', `${USERS}/${bMember.id}`, { token: b.ownerKey })).body.email;

    const all = await client.request('GET', `${USERS}?limit=100`, { token: a.ownerKey });
    const bySearch = await client.request('GET', `${USERS}?search=${encodeURIComponent(bEmail)}`, { token: a.ownerKey });
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: a.ownerKey });

    expect(all.body.data.map((u: { id: string }) => u.id)).toEqual([a.ownerId]);
    expect(all.body.pagination.total_count).toBe(1);
    expect(bySearch.body).toEqual({ data: [], pagination: { next_cursor: null, has_more: false, total_count: 0 } });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([a.ownerId]);
  });

  it('lets the same email exist in two accounts (unique per organization only)', async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    const email = uniqueEmail('shared');
    expect((await client.request('POST', USERS, { token: a.ownerKey, body: { email, name: 'In A' } })).status).toBe(201);
    expect((await client.request('POST', USERS, { token: b.ownerKey, body: { email, name: 'In B' } })).status).toBe(201);
  });
});
