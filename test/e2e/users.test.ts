import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway, type TestAccount } from '../support/api.ts';
import { expectUserError, USERS } from '../support/users.ts';

const { client } = useGateway();
const FULL_FIELDS = ['avatar_url', 'created_at', 'email', 'id', 'last_login_at', 'name', 'role', 'status', 'updated_at'];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** An account with one active user of every role, each with an API key. */
async function team() {
  const acct = await createTestAccount();
  const [admin, member, viewer] = await Promise.all([acct.addUser('admin'), acct.addUser('member'), acct.addUser('viewer')]);
  return { acct, owner: { id: acct.ownerId, key: acct.ownerKey }, admin, member, viewer };
}

/** One team shared by the tests that only read or only create (they cannot disturb each other). */
let shared: Awaited<ReturnType<typeof team>>;
beforeAll(async () => {
  shared = await team();
});

const createAs = (token: string, body: Record<string, unknown>) => client.request('POST', USERS, { token, body });
const invite = async (acct: TestAccount, role: 'admin' | 'member' | 'viewer' = 'member') => {
  const res = await createAs(acct.ownerKey, { email: uniqueEmail(role), name: `Target ${role}`, role, send_invitation: false });
  expect(res.status).toBe(201);
  return res.body as { id: string; email: string; name: string; role: string; status: string; created_at: string; updated_at: string };
};

describe('GET /users/me and GET /users/{user_id}', () => {
  it('GET /users/me answers the caller with exactly id, email, name, created_at and role', async () => {
    const acct = shared.acct;
    const res = await client.request('GET', `${USERS}/me`, { token: acct.ownerKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'email', 'id', 'name', 'role']);
    expect(res.body).toMatchObject({ id: acct.ownerId, role: 'owner', name: 'Olive Owner' });
    expect(res.body.created_at).toMatch(ISO);
  });

  it('GET /users/me is not shadowed by /users/{user_id}: each role sees itself, by key and by session token', async () => {
    const { admin, member, viewer, acct } = shared;
    for (const u of [admin, member, viewer]) {
      const byKey = await client.request('GET', `${USERS}/me`, { token: u.key });
      const bySession = await client.request('GET', `${USERS}/me`, { token: await acct.session(u.id) });
      expect(byKey.body.id).toBe(u.id);
      expect(bySession.body).toEqual(byKey.body);
    }
  });

  it('GET /users/{id} answers the full user object', async () => {
    const acct = shared.acct;
    const member = await acct.addUser('member');
    const res = await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(FULL_FIELDS);
    expect(res.body).toMatchObject({ id: member.id, name: 'member person', role: 'member', status: 'active', avatar_url: null });
    for (const f of ['created_at', 'updated_at', 'last_login_at']) expect(res.body[f]).toMatch(ISO);
  });

  it('GET /users/{id} with the caller’s own id equals the matching fields of /users/me', async () => {
    const acct = shared.acct;
    const me = await client.request('GET', `${USERS}/me`, { token: acct.ownerKey });
    const byId = await client.request('GET', `${USERS}/${acct.ownerId}`, { token: acct.ownerKey });
    expect(byId.body).toMatchObject(me.body);
  });
});

describe('POST /users', () => {
  it('creates an invited member by default and answers 201 with the full user object', async () => {
    const acct = shared.acct;
    const email = uniqueEmail('new');
    const res = await createAs(acct.ownerKey, { email, name: 'New Person' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(FULL_FIELDS);
    expect(res.body).toMatchObject({ email, name: 'New Person', role: 'member', status: 'invited', avatar_url: null, last_login_at: null });
    expect(res.body.id).toMatch(/^usr_/);
    expect(res.body.created_at).toBe(res.body.updated_at);
    const fetched = await client.request('GET', `${USERS}/${res.body.id}`, { token: acct.ownerKey });
    expect(fetched.body).toEqual(res.body);
  });

  it.each(['admin', 'member', 'viewer'])('creates a user with role %s, with or without send_invitation', async (role) => {
    const acct = shared.acct;
    const withMail = await createAs(acct.ownerKey, { email: uniqueEmail(role), name: 'A', role, send_invitation: true });
    const withoutMail = await createAs(acct.ownerKey, { email: uniqueEmail(role), name: 'B', role, send_invitation: false });
    expect([withMail.status, withoutMail.status]).toEqual([201, 201]);
    expect([withMail.body.role, withoutMail.body.role]).toEqual([role, role]);
    expect([withMail.body.status, withoutMail.body.status]).toEqual(['invited', 'invited']);
  });

  it('refuses a duplicate email case-insensitively with 409 resource_already_exists', async () => {
    const acct = shared.acct;
    const email = uniqueEmail('dup');
    expect((await createAs(acct.ownerKey, { email, name: 'A' })).status).toBe(201);
    expectUserError(await createAs(acct.ownerKey, { email: email.toUpperCase(), name: 'B' }), 409, 'resource_already_exists');
    expectUserError(await createAs(acct.ownerKey, { email, name: 'C' }), 409, 'resource_already_exists');
    const listed = await client.request('GET', `${USERS}?search=${encodeURIComponent(email)}`, { token: acct.ownerKey });
    expect(listed.body.data.map((u: { name: string }) => u.name)).toEqual(['A']);
  });

  it("refuses the account owner's own email in another case", async () => {
    const acct = shared.acct;
    const ownerEmail = (await client.request('GET', `${USERS}/me`, { token: acct.ownerKey })).body.email as string;
    expectUserError(await createAs(acct.ownerKey, { email: ownerEmail.toUpperCase(), name: 'Twin' }), 409, 'resource_already_exists');
  });

  it.each([
    [{ email: 'not-an-email', name: 'X' }, 'email'],
    [{ email: 'a@', name: 'X' }, 'email'],
    [{ email: ' spaced@example.com@', name: 'X' }, 'email'],
    [{ name: 'X' }, 'email'],
    [{ email: 'ok@example.com' }, 'name'],
    [{ email: 'ok@example.com', name: '' }, 'name'],
    [{ email: 'ok@example.com', name: '   ' }, 'name'],
    [{ email: 'ok@example.com', name: 'x'.repeat(201) }, 'name'],
    [{ email: 'ok@example.com', name: 'X', role: 'owner' }, 'role'],
    [{ email: 'ok@example.com', name: 'X', role: 'superuser' }, 'role'],
    [{ email: 'ok@example.com', name: 'X', role: 'ADMIN' }, 'role'],
    [{ email: 'ok@example.com', name: 'X', send_invitation: 'yes' }, 'send_invitation'],
  ])('answers 400 validation_error naming the field for %j', async (body, field) => {
    expectUserError(await createAs(shared.owner.key, body), 400, 'validation_error', field);
  });

  it.each([
    ['malformed JSON', '{"email":'],
    ['an array', '[]'],
    ['an array of an object', '[{"email":"a@example.com","name":"A"}]'],
    ['null', 'null'],
    ['a number', '42'],
    ['a string', '"text"'],
    ['an empty body', ''],
  ])('answers 400 validation_error for a body that is %s', async (_label, rawBody) => {
    const res = await client.request('POST', USERS, { token: shared.owner.key, rawBody });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('accepts a name of exactly 200 characters', async () => {
    const acct = shared.acct;
    const name = 'n'.repeat(200);
    const res = await createAs(acct.ownerKey, { email: uniqueEmail(), name });
    expect(res.status).toBe(201);
    expect(res.body.name).toBe(name);
  });
});

describe('permissions (decisions §1)', () => {
  it.each([
    ['owner', 'admin', 201],
    ['owner', 'member', 201],
    ['owner', 'viewer', 201],
    ['admin', 'admin', 201],
    ['admin', 'member', 201],
    ['admin', 'viewer', 201],
    ['member', 'member', 201],
    ['member', 'viewer', 201],
    ['member', 'admin', 403],
    ['viewer', 'viewer', 403],
    ['viewer', 'member', 403],
    ['viewer', 'admin', 403],
  ] as const)('a %s creating a %s answers %i', async (caller, role, status) => {
    const t = shared;
    const email = uniqueEmail(role);
    const res = await createAs(t[caller].key, { email, name: 'P', role });
    if (status === 201) {
      expect(res.status).toBe(201);
      expect(res.body.role).toBe(role);
    } else {
      expectUserError(res, 403, 'forbidden');
      const listed = await client.request('GET', `${USERS}?search=${encodeURIComponent(email)}`, { token: t.owner.key });
      expect(listed.body.pagination.total_count).toBe(0);
    }
  });

  it('a viewer inviting with an invalid body is still 403: the role is checked before the body', async () => {
    expectUserError(await createAs(shared.viewer.key, { email: 'not-an-email', role: 'nonsense' }), 403, 'forbidden');
  });

  it.each(['owner', 'admin', 'member', 'viewer'] as const)('a %s may list users, read a user and read itself', async (caller) => {
    const t = shared;
    const list = await client.request('GET', USERS, { token: t[caller].key });
    const one = await client.request('GET', `${USERS}/${t.member.id}`, { token: t[caller].key });
    const me = await client.request('GET', `${USERS}/me`, { token: t[caller].key });
    expect([list.status, one.status, me.status]).toEqual([200, 200, 200]);
    expect(list.body.data.map((u: { id: string }) => u.id)).toEqual(expect.arrayContaining([t.owner.id, t.admin.id, t.member.id, t.viewer.id]));
    expect(one.body.id).toBe(t.member.id);
    expect(me.body.id).toBe(t[caller].id);
  });

  it.each(['owner', 'admin'] as const)('a %s may rename, change the role of, suspend, reactivate and delete a user', async (caller) => {
    const t = await team();
    const target = await invite(t.acct);

    const renamed = await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { name: 'Renamed' } });
    const promoted = await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { role: 'admin' } });
    const suspended = await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { status: 'suspended' } });
    const reactivated = await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { status: 'active', role: 'viewer' } });

    expect(renamed.body).toMatchObject({ id: target.id, name: 'Renamed', role: 'member', status: 'invited' });
    expect(promoted.body).toMatchObject({ name: 'Renamed', role: 'admin' });
    expect(suspended.body).toMatchObject({ role: 'admin', status: 'suspended' });
    expect(reactivated.body).toMatchObject({ role: 'viewer', status: 'active', name: 'Renamed' });
    expect(Object.keys(reactivated.body).sort()).toEqual(FULL_FIELDS);
    expect(reactivated.body.updated_at > target.updated_at).toBe(true);
    expect(reactivated.body.created_at).toBe(target.created_at);

    const del = await client.request('DELETE', `${USERS}/${target.id}`, { token: t[caller].key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectUserError(await client.request('GET', `${USERS}/${target.id}`, { token: t[caller].key }), 404, 'resource_not_found');
  });

  it.each(['member', 'viewer'] as const)('a %s may neither update nor delete a user (403), and the user is unchanged', async (caller) => {
    const t = await team();
    const target = await invite(t.acct);
    for (const body of [{ name: 'Nope' }, { role: 'viewer' }, { status: 'suspended' }, { role: 'owner' }]) {
      expectUserError(await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body }), 403, 'forbidden');
    }
    expectUserError(await client.request('DELETE', `${USERS}/${target.id}`, { token: t[caller].key }), 403, 'forbidden');
    expectUserError(await client.request('PATCH', `${USERS}/${t[caller].id}`, { token: t[caller].key, body: { role: 'admin' } }), 403, 'forbidden');
    // The role is checked before the body: an invalid body from a caller who may not write is still 403.
    expectUserError(await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { status: 'nonsense' } }), 403, 'forbidden');

    const after = await client.request('GET', `${USERS}/${target.id}`, { token: t.owner.key });
    expect(after.body).toMatchObject({ name: target.name, role: 'member', status: 'invited', updated_at: target.updated_at });
    expect((await client.request('GET', `${USERS}/me`, { token: t[caller].key })).body.role).toBe(caller);
  });

  it('PATCH with an empty body changes nothing and answers the user', async () => {
    const acct = shared.acct;
    const target = await invite(acct);
    const res = await client.request('PATCH', `${USERS}/${target.id}`, { token: acct.ownerKey, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey }).then((r) => r.body));
    expect(res.body.updated_at).toBe(target.updated_at);
  });

  it.each([
    [{ status: 'invited' }, 'status'],
    [{ status: 'deleted' }, 'status'],
    [{ role: 'superuser' }, 'role'],
    [{ name: '' }, 'name'],
    [{ name: 'x'.repeat(201) }, 'name'],
    [{ name: 42 }, 'name'],
  ])('PATCH answers 400 validation_error naming the field for %j, changing nothing', async (body, field) => {
    const acct = shared.acct;
    const target = await invite(acct);
    expectUserError(await client.request('PATCH', `${USERS}/${target.id}`, { token: acct.ownerKey, body }), 400, 'validation_error', field);
    const after = await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey });
    expect(after.body.updated_at).toBe(target.updated_at);
  });

  it('PATCH and DELETE of an unknown user answer 404 resource_not_found', async () => {
    const acct = shared.acct;
    expectUserError(await client.request('PATCH', `${USERS}/usr_01J000000000000000000NOONE`, { token: acct.ownerKey, body: { name: 'X' } }), 404, 'resource_not_found');
    expectUserError(await client.request('DELETE', `${USERS}/usr_01J000000000000000000NOONE`, { token: acct.ownerKey }), 404, 'resource_not_found');
  });

  it('deleting answers 204 with an empty body; the user is gone, a second delete is 404, and the email is free again', async () => {
    const acct = shared.acct;
    const target = await invite(acct);

    const del = await client.request('DELETE', `${USERS}/${target.id}`, { token: acct.ownerKey });

    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectUserError(await client.request('GET', `${USERS}/${target.id}`, { token: acct.ownerKey }), 404, 'resource_not_found');
    expectUserError(await client.request('DELETE', `${USERS}/${target.id}`, { token: acct.ownerKey }), 404, 'resource_not_found');
    const list = await client.request('GET', USERS, { token: acct.ownerKey });
    expect(list.body.data.map((u: { id: string }) => u.id)).not.toContain(target.id);
    const again = await createAs(acct.ownerKey, { email: target.email, name: 'Back again' });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(target.id);
  });
});

describe('the owner (decisions §1)', () => {
  it('PATCH role owner by the owner transfers ownership: the former owner becomes admin and exactly one owner remains', async () => {
    const t = await team();

    const res = await client.request('PATCH', `${USERS}/${t.member.id}`, { token: t.owner.key, body: { role: 'owner' } });

    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.member.id, role: 'owner' });
    const former = await client.request('GET', `${USERS}/${t.owner.id}`, { token: t.member.key });
    expect(former.body.role).toBe('admin');
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: t.viewer.key });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([t.member.id]);
    expect(owners.body.pagination.total_count).toBe(1);
    expect((await client.request('GET', `${USERS}/me`, { token: t.member.key })).body.role).toBe('owner');
  });

  it('after a transfer the former owner acts as an admin and the new owner has the owner’s rights', async () => {
    const t = await team();
    await client.request('PATCH', `${USERS}/${t.admin.id}`, { token: t.owner.key, body: { role: 'owner' } });

    const transferBack = await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.owner.key, body: { role: 'owner' } });
    const suspendNewOwner = await client.request('PATCH', `${USERS}/${t.admin.id}`, { token: t.owner.key, body: { status: 'suspended' } });
    const deleteFormer = await client.request('DELETE', `${USERS}/${t.owner.id}`, { token: t.admin.key });

    expectUserError(transferBack, 403, 'forbidden');
    // Suspending the owner is a conflict whoever asks (decisions §1); the former owner is refused it like anyone else.
    expectUserError(suspendNewOwner, 409, 'conflict');
    expect(deleteFormer.status).toBe(204);
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: t.admin.key });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([t.admin.id]);
  });

  it.each(['admin', 'member', 'viewer'] as const)('PATCH role owner by a %s is 403 and changes nothing', async (caller) => {
    const t = await team();
    const target = await invite(t.acct);
    expectUserError(await client.request('PATCH', `${USERS}/${target.id}`, { token: t[caller].key, body: { role: 'owner' } }), 403, 'forbidden');
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: t.owner.key });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([t.owner.id]);
  });

  it('an admin cannot change the owner (403): name or role', async () => {
    const t = await team();
    for (const body of [{ name: 'Coup' }, { role: 'viewer' }]) {
      expectUserError(await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.admin.key, body }), 403, 'forbidden');
    }
    const owner = await client.request('GET', `${USERS}/${t.owner.id}`, { token: t.owner.key });
    expect(owner.body).toMatchObject({ name: 'Olive Owner', status: 'active', role: 'owner' });
  });

  it('the owner cannot be suspended or deleted (409 conflict), by itself or by an admin', async () => {
    const t = await team();
    expectUserError(await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.owner.key, body: { status: 'suspended' } }), 409, 'conflict');
    // decisions §1 names suspension of the owner a conflict whoever asks, as deleting it is.
    expectUserError(await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.admin.key, body: { status: 'suspended' } }), 409, 'conflict');
    expectUserError(await client.request('DELETE', `${USERS}/${t.owner.id}`, { token: t.owner.key }), 409, 'conflict');
    const byAdmin = await client.request('DELETE', `${USERS}/${t.owner.id}`, { token: t.admin.key });
    expect([403, 409]).toContain(byAdmin.status);
    const owner = await client.request('GET', `${USERS}/${t.owner.id}`, { token: t.owner.key });
    expect(owner.body).toMatchObject({ role: 'owner', status: 'active' });
  });

  it('the owner cannot step down to another role without naming a successor', async () => {
    const t = await team();
    const res = await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.owner.key, body: { role: 'admin' } });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    const owners = await client.request('GET', `${USERS}?role=owner`, { token: t.owner.key });
    expect(owners.body.data.map((u: { id: string }) => u.id)).toEqual([t.owner.id]);
  });

  it('the owner may rename itself', async () => {
    const t = await team();
    const res = await client.request('PATCH', `${USERS}/${t.owner.id}`, { token: t.owner.key, body: { name: 'Olive Renamed' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Olive Renamed', role: 'owner' });
  });
});
