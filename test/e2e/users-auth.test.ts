import { describe, expect, it } from 'vitest';
import { signSessionToken } from '../../shared/auth/jwt.ts';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();
const ME = '/playbook/api/v1/users/me';

describe('authentication (decisions §1)', () => {
  it.each([[undefined], ['Basic abc'], ['Bearer'], ['Bearer sk_short'], ['Bearer sk_' + 'x'.repeat(40)], ['Bearer not.a.jwt']])('answers 401 unauthorized for Authorization %s', async (header) => {
    const res = await client.request('GET', ME, { headers: header ? { Authorization: header } : {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('answers 401 in the support-desk envelope on /helpdesk paths', async () => {
    const res = await client.request('GET', '/helpdesk/api/v1/tickets');
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ success: false, error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
  });

  it('accepts a session token and refuses a tampered, expired or foreign-account one', async () => {
    const acct = await createTestAccount();
    const other = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    expect((await client.request('GET', ME, { token })).status).toBe(200);
    const [h, p, s] = token.split('.');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, acct: other.accountId })).toString('base64url')}.${s}`;
    expect((await client.request('GET', ME, { token: forged })).status).toBe(401);
    expect((await client.request('GET', ME, { token: `${h}.${p}.${s.slice(0, -2)}xx` })).status).toBe(401);
    const expired = await signSessionToken(acct.accountId, acct.ownerId, 60, Date.now() - 120_000);
    expect((await client.request('GET', ME, { token: expired.token })).status).toBe(401);
    // Signed correctly, but the user is not in that account.
    const mismatched = await signSessionToken(other.accountId, acct.ownerId, 60);
    expect((await client.request('GET', ME, { token: mismatched.token })).status).toBe(401);
  });

  it('refuses a revoked API key', async () => {
    const accounts = await import('../../shared/accounts/service.ts');
    const acct = await createTestAccount();
    const key = await accounts.createApiKey(acct.accountId, acct.ownerId, 'temp');
    expect((await client.request('GET', ME, { token: key.apiKey })).status).toBe(200);
    await accounts.revokeApiKey(acct.accountId, key.id);
    expect((await client.request('GET', ME, { token: key.apiKey })).status).toBe(401);
  });

  it("refuses a suspended user's key and token, and a deleted user's key", async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const token = await acct.session(member.id);
    await client.request('PATCH', `/playbook/api/v1/users/${member.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(401);
    expect((await client.request('GET', ME, { token })).status).toBe(401);
    await client.request('PATCH', `/playbook/api/v1/users/${member.id}`, { token: acct.ownerKey, body: { status: 'active' } });
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(200);
    await client.request('DELETE', `/playbook/api/v1/users/${member.id}`, { token: acct.ownerKey });
    expect((await client.request('GET', ME, { token: member.key })).status).toBe(401);
  });

  it('treats issuing a session token as a login: sets last_login_at and activates an invited user', async () => {
    const acct = await createTestAccount();
    const invited = await client.request('POST', '/playbook/api/v1/users', { token: acct.ownerKey, body: { email: 'inv@example.com', name: 'Inv' } });
    expect(invited.body).toMatchObject({ status: 'invited', last_login_at: null });
    await acct.session(invited.body.id);
    const after = await client.request('GET', `/playbook/api/v1/users/${invited.body.id}`, { token: acct.ownerKey });
    expect(after.body.status).toBe('active');
    expect(after.body.last_login_at).toEqual(expect.any(String));
  });
});
