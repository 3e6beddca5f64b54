import { describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway } from '../support/api.ts';

const { client } = useGateway();
const USERS = '/playbook/api/v1/users';

describe('user management: reads', () => {
  it('GET /users/me answers the caller (not shadowed by /users/{user_id}) with exactly its fields', async () => {
    const acct = await createTestAccount();
    const res = await client.request('GET', `${USERS}/me`, { token: acct.ownerKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'email', 'id', 'name', 'role']);
    expect(res.body).toMatchObject({ id: acct.ownerId, role: 'owner', name: 'Olive Owner' });
  });

  it('GET /users/{id} answers the full user object', async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const res = await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['avatar_url', 'created_at', 'email', 'id', 'last_login_at', 'name', 'role', 'status', 'updated_at']);
    expect(res.body).toMatchObject({ id: member.id, role: 'member', status: 'active', avatar_url: null });
    expect(res.body.last_login_at).toEqual(expect.any(String));
  });

  it('answers 404 resource_not_found for an unknown id and for a user of another account', async () => {
    const a = await createTestAccount();
    const b = await createTestAccount();
    for (const id of ['usr_missing', b.ownerId]) {
      const res = await client.request('GET', `${USERS}/${id}`, { token: a.ownerKey });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { code: 'resource_not_found', message: expect.any(String) } });
    }
    const list = await client.request('GET', USERS, { token: a.ownerKey });
    expect(list.body.data.map((u: { id: string }) => u.id)).toEqual([a.ownerId]);
  });
});

describe('user management: create', () => {
  it('creates an invited member by default and answers 201 with the user object', async () => {
    const acct = await createTestAccount();
    const email = uniqueEmail('new');
    const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'New Person' } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ email, name: 'New Person', role: 'member', status: 'invited', avatar_url: null, last_login_at: null });
    expect(res.body.id).toMatch(/^usr_/);
  });

  it('refuses a duplicate email case-insensitively with 409 resource_already_exists', async () => {
    const acct = await createTestAccount();
    const email = uniqueEmail('dup');
    expect((await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'A' } })).status).toBe(201);
    const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email: email.toUpperCase(), name: 'B' } });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('resource_already_exists');
  });

  it.each([
    [{ email: 'not-an-email', name: 'X' }, 'email'],
    [{ name: 'X' }, 'email'],
    [{ email: 'ok@example.com' }, 'name'],
    [{ email: 'ok@example.com', name: '' }, 'name'],
    [{ email: 'ok@example.com', name: 'X', role: 'owner' }, 'role'],
    [{ email: 'ok@example.com', name: 'X', role: 'superuser' }, 'role'],
    [{ email: 'ok@example.com', name: 'X', send_invitation: 'yes' }, 'send_invitation'],
  ])('answers 400 validation_error naming the field for %j', async (body, field) => {
    const acct = await createTestAccount();
    const res = await client.request('POST', USERS, { token: acct.ownerKey, body });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field });
  });

  it.each(['{"email":', '[]', 'null', '42', '"text"'])('answers 400 validation_error for the body %s', async (rawBody) => {
    const acct = await createTestAccount();
    const res = await client.request('POST', USERS, { token: acct.ownerKey, rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });
});

describe('user management: permissions (decisions §1)', () => {
  it('lets owner and admin create any non-owner role, members invite members and viewers only, viewers nothing', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    const viewer = await acct.addUser('viewer');
    const create = (token: string, role: string) => client.request('POST', USERS, { token, body: { email: uniqueEmail(role), name: 'P', role } });
    expect((await create(acct.ownerKey, 'admin')).status).toBe(201);
    expect((await create(admin.key, 'admin')).status).toBe(201);
    expect((await create(member.key, 'member')).status).toBe(201);
    expect((await create(member.key, 'viewer')).status).toBe(201);
    const memberAdmin = await create(member.key, 'admin');
    expect(memberAdmin.status).toBe(403);
    expect(memberAdmin.body).toEqual({ error: { code: 'forbidden', message: expect.any(String) } });
    expect((await create(viewer.key, 'viewer')).status).toBe(403);
  });

  it('lets every role read, and only owner and admin update or delete', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    const viewer = await acct.addUser('viewer');
    const target = await acct.addUser('member');
    for (const key of [admin.key, member.key, viewer.key]) {
      expect((await client.request('GET', USERS, { token: key })).status).toBe(200);
      expect((await client.request('GET', `${USERS}/${target.id}`, { token: key })).status).toBe(200);
      expect((await client.request('GET', `${USERS}/me`, { token: key })).status).toBe(200);
    }
    for (const key of [member.key, viewer.key]) {
      expect((await client.request('PATCH', `${USERS}/${target.id}`, { token: key, body: { name: 'Nope' } })).status).toBe(403);
      expect((await client.request('DELETE', `${USERS}/${target.id}`, { token: key })).status).toBe(403);
    }
    expect((await client.request('PATCH', `${USERS}/${target.id}`, { token: admin.key, body: { name: 'Renamed' } })).body.name).toBe('Renamed');
    const del = await client.request('DELETE', `${USERS}/${target.id}`, { token: admin.key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await client.request('GET', `${USERS}/${target.id}`, { token: admin.key })).status).toBe(404);
  });

  it('transfers ownership when the owner sets role owner on another user; the former owner becomes admin', async () => {
    const acct = await createTestAccount();
    const next = await acct.addUser('member');
    const res = await client.request('PATCH', `${USERS}/${next.id}`, { token: acct.ownerKey, body: { role: 'owner' } });
    expect(res.status).toBe(200);
    expect(res.body.role).toBe('owner');
    const former = await client.request('GET', `${USERS}/${acct.ownerId}`, { token: next.key });
    expect(former.body.role).toBe('admin');
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: next.key });
    expect(owners.body.pagination.total_count).toBe(1);
  });

  it('refuses ownership transfer by an admin (403), changes to the owner by an admin (403), and suspending or deleting the owner (409)', async () => {
    const acct = await createTestAccount();
    const admin = await acct.addUser('admin');
    const member = await acct.addUser('member');
    expect((await client.request('PATCH', `${USERS}/${member.id}`, { token: admin.key, body: { role: 'owner' } })).status).toBe(403);
    expect((await client.request('PATCH', `${USERS}/${acct.ownerId}`, { token: admin.key, body: { name: 'Coup' } })).status).toBe(403);
    const suspend = await client.request('PATCH', `${USERS}/${acct.ownerId}`, { token: acct.ownerKey, body: { status: 'suspended' } });
    expect(suspend.status).toBe(409);
    expect(suspend.body.error.code).toBe('conflict');
    const del = await client.request('DELETE', `${USERS}/${acct.ownerId}`, { token: acct.ownerKey });
    expect(del.status).toBe(409);
    expect(del.body.error.code).toBe('conflict');
  });

  it('accepts only active or suspended as PATCH status', async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const res = await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { status: 'invited' } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_error', field: 'status' });
    const ok = await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
    expect(ok.body.status).toBe('suspended');
    expect(ok.body.updated_at > ok.body.created_at).toBe(true);
  });
});
