import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, TICKETS, type Desk } from '../support/desk.ts';
import { expectError, GROUPS, insertAgents, newGroup } from '../support/groups.ts';

const { client } = useGateway();
let acct: TestAccount;
let admin: Desk;
let agent: { id: string; key: string };
let agent2: { id: string; key: string };
let viewer: { id: string; key: string };

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  [agent, agent2, viewer] = await Promise.all([acct.addUser('member'), acct.addUser('member'), acct.addUser('viewer')]);
});

describe('groups: create, read, update, list', () => {
  it('creates with defaults; the first group of an account is the default, later ones are not', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const first = await d.post(GROUPS, { name: '  Billing  ' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^grp_/),
        name: 'Billing',
        description: null,
        isPrivate: false,
        distributionMode: 'manual',
        leadUserId: null,
        maxOpenTickets: null,
        maxOpenTicketsGlobal: null,
        isActive: true,
        isDefault: true,
        memberCount: 0,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    const second = await newGroup(d, { description: 'Second line', distributionMode: 'leastBusy', isPrivate: true, maxOpenTickets: 5, maxOpenTicketsGlobal: 12 });
    expect(second).toMatchObject({ isDefault: false, description: 'Second line', distributionMode: 'leastBusy', isPrivate: true, maxOpenTickets: 5, maxOpenTicketsGlobal: 12 });
    const got = await d.get(`${GROUPS}/${second.id}`);
    expect(got.body.data).toEqual(second);
  });

  it('exactly one default group even when the first groups are created concurrently', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => d.post(GROUPS, { name: `G${i}` })));
    expect(made.map((r) => r.status)).toEqual(Array(6).fill(201));
    const list = await d.get(GROUPS);
    expect(list.body.data.filter((g: { isDefault: boolean }) => g.isDefault)).toHaveLength(1);
  });

  it('validates limits: name 1..100, description up to 512, caps positive integers or null, known modes', async () => {
    expect((await admin.post(GROUPS, { name: 'x'.repeat(100), description: 'd'.repeat(512) })).status).toBe(201);
    expectError(await admin.post(GROUPS, { name: 'x'.repeat(101) }), 422, 'VALIDATION_ERROR', 'name');
    expectError(await admin.post(GROUPS, { name: '' }), 422, 'VALIDATION_ERROR', 'name');
    expectError(await admin.post(GROUPS, {}), 422, 'VALIDATION_ERROR', 'name');
    expectError(await admin.post(GROUPS, { name: 'ok', description: 'd'.repeat(513) }), 422, 'VALIDATION_ERROR', 'description');
    for (const bad of [0, -1, 1.5, '3']) expectError(await admin.post(GROUPS, { name: 'ok', maxOpenTickets: bad }), 422, 'VALIDATION_ERROR', 'maxOpenTickets');
    expectError(await admin.post(GROUPS, { name: 'ok', maxOpenTicketsGlobal: 0 }), 422, 'VALIDATION_ERROR', 'maxOpenTicketsGlobal');
    expectError(await admin.post(GROUPS, { name: 'ok', distributionMode: 'random' }), 422, 'VALIDATION_ERROR', 'distributionMode');
    expectError(await admin.raw('POST', GROUPS, '{bad json'), 400, 'BAD_REQUEST');
    expectError(await admin.raw('POST', GROUPS, '[1]'), 400, 'BAD_REQUEST');
  });

  it('updates only the given fields; caps can be cleared with null', async () => {
    const g = await newGroup(admin, { maxOpenTickets: 3, description: 'keep me' });
    const res = await admin.put(`${GROUPS}/${g.id}`, { name: 'Renamed', maxOpenTickets: null, distributionMode: 'roundRobin' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: 'Renamed', maxOpenTickets: null, distributionMode: 'roundRobin', description: 'keep me' });
    expectError(await admin.put(`${GROUPS}/${g.id}`, { name: 'y'.repeat(101) }), 422, 'VALIDATION_ERROR', 'name');
    expectError(await admin.put(`${GROUPS}/grp_missing`, { name: 'x' }), 404, 'NOT_FOUND');
  });

  it('lists with isActive / isPrivate filters and fields; unknown fields are 400', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const pub = await newGroup(d, { name: 'Public' });
    const priv = await newGroup(d, { name: 'Private', isPrivate: true });
    const off = await newGroup(d, { name: 'Off' });
    expect((await d.put(`${GROUPS}/${off.id}/deactivate`, {})).status).toBe(200);
    const ids = async (q: string) => (await d.get(`${GROUPS}${q}`)).body.data.map((g: { id: string }) => g.id).sort();
    expect(await ids('')).toEqual([pub.id, priv.id, off.id].sort());
    expect(await ids('?isActive=false')).toEqual([off.id]);
    expect(await ids('?isActive=true&isPrivate=true')).toEqual([priv.id]);
    const slim = await d.get(`${GROUPS}?fields=name,isDefault`);
    expect(slim.status).toBe(200);
    expect(slim.body.data.find((g: { id: string }) => g.id === pub.id)).toEqual({ id: pub.id, name: 'Public', isDefault: true });
    expect(slim.body.meta).toEqual({ page: 1, limit: 50, total: 3, totalPages: 1 });
    expectError(await d.get(`${GROUPS}?fields=name,colour`), 400, 'BAD_REQUEST', 'fields');
    expectError(await d.get(`${GROUPS}?isActive=yes`), 400, 'BAD_REQUEST', 'isActive');
    expectError(await d.get(`${GROUPS}?limit=101`), 400, 'BAD_REQUEST', 'limit');
  });
});

describe('groups: activity, default, lead, delete', () => {
  it('deactivates and reactivates', async () => {
    const g = await newGroup(admin);
    expect((await admin.put(`${GROUPS}/${g.id}/deactivate`, {})).body.data.isActive).toBe(false);
    expect((await admin.put(`${GROUPS}/${g.id}/deactivate`, {})).body.data.isActive).toBe(false);
    expect((await admin.put(`${GROUPS}/${g.id}/reactivate`, {})).body.data.isActive).toBe(true);
  });

  it('switches the default in one step; deleting the default passes it on; parallel switches leave exactly one default', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const a = await newGroup(d);
    const b = await newGroup(d);
    const c = await newGroup(d);
    expect(a.isDefault).toBe(true);
    const res = await d.put(`${GROUPS}/${b.id}/default`, {});
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: b.id, isDefault: true });
    expect((await d.get(`${GROUPS}/${a.id}`)).body.data.isDefault).toBe(false);
    // Deleting the default hands it to the oldest remaining group, in the same transaction.
    expect((await d.del(`${GROUPS}/${b.id}`)).status).toBe(204);
    expect((await d.get(`${GROUPS}/${a.id}`)).body.data.isDefault).toBe(true);
    await Promise.all([a, c, a, c].map((g) => d.put(`${GROUPS}/${g.id}/default`, {})));
    const defaults = (await d.get(GROUPS)).body.data.filter((g: { isDefault: boolean }) => g.isDefault);
    expect(defaults).toHaveLength(1);
  });

  it('deletes the only group (the default); the next group created becomes the default', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const only = await newGroup(d);
    expect(only.isDefault).toBe(true);
    expect((await d.del(`${GROUPS}/${only.id}`)).status).toBe(204);
    expect((await d.get(`${GROUPS}/${only.id}`)).status).toBe(404);
    expect((await d.get(GROUPS)).body.data).toEqual([]);
    const next = await newGroup(d);
    expect(next.isDefault).toBe(true);
  });

  it('sets a lead who must be a member; removing the lead clears it', async () => {
    const g = await newGroup(admin);
    expectError(await admin.put(`${GROUPS}/${g.id}/lead`, { userId: agent.id }), 422, 'VALIDATION_ERROR', 'userId');
    await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id });
    const lead = await admin.put(`${GROUPS}/${g.id}/lead`, { userId: agent.id });
    expect(lead.body.data.leadUserId).toBe(agent.id);
    expect((await admin.del(`${GROUPS}/${g.id}/members/${agent.id}`)).status).toBe(204);
    expect((await admin.get(`${GROUPS}/${g.id}`)).body.data.leadUserId).toBeNull();
    expectError(await admin.put(`${GROUPS}/${g.id}/lead`, {}), 422, 'VALIDATION_ERROR', 'userId');
  });

  it('deleting a group removes it and its members, and detaches its tickets (assignee kept)', async () => {
    const g = await newGroup(admin);
    await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id });
    const t1 = await newTicket(admin, { groupId: g.id, assigneeId: agent.id });
    const t2 = await newTicket(admin, { groupId: g.id });
    expect((await admin.del(`${GROUPS}/${g.id}`)).status).toBe(204);
    expectError(await admin.get(`${GROUPS}/${g.id}`), 404, 'NOT_FOUND');
    expectError(await admin.get(`${GROUPS}/${g.id}/members`), 404, 'NOT_FOUND');
    expectError(await admin.del(`${GROUPS}/${g.id}`), 404, 'NOT_FOUND');
    expect((await admin.get(GROUPS)).body.data.some((x: { id: string }) => x.id === g.id)).toBe(false);
    const [a, b] = await Promise.all([admin.get(`${TICKETS}/${t1.id}`), admin.get(`${TICKETS}/${t2.id}`)]);
    expect(a.body.ticket).toMatchObject({ groupId: null, assigneeId: agent.id });
    expect(b.body.ticket).toMatchObject({ groupId: null, assigneeId: null });
    expectError(await admin.post(TICKETS, { ticket: { subject: 'x', groupId: g.id } }), 422, 'VALIDATION_ERROR', 'groupId');
  });
});

describe('groups: members', () => {
  it('adds, lists, updates and removes members with caps and skills', async () => {
    const g = await newGroup(admin);
    const added = await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id, maxOpenTickets: 4, skills: ['billing', 'de', 'billing'] });
    expect(added.status).toBe(201);
    expect(added.body.data).toEqual({ userId: agent.id, groupId: g.id, maxOpenTickets: 4, skills: ['billing', 'de'], addedAt: expect.any(String) });
    expectError(await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id }), 409, 'CONFLICT');
    await admin.post(`${GROUPS}/${g.id}/members`, { userId: acct.ownerId });
    const list = await admin.get(`${GROUPS}/${g.id}/members`);
    expect(list.body.data.map((m: { userId: string }) => m.userId)).toEqual([agent.id, acct.ownerId]);
    expect((await admin.get(`${GROUPS}/${g.id}`)).body.data.memberCount).toBe(2);
    const upd = await admin.put(`${GROUPS}/${g.id}/members/${agent.id}`, { maxOpenTickets: null });
    expect(upd.body.data).toMatchObject({ maxOpenTickets: null, skills: ['billing', 'de'] });
    const upd2 = await admin.put(`${GROUPS}/${g.id}/members/${agent.id}`, { skills: [] });
    expect(upd2.body.data).toMatchObject({ maxOpenTickets: null, skills: [] });
    expectError(await admin.put(`${GROUPS}/${g.id}/members/${agent.id}`, { maxOpenTickets: 0 }), 422, 'VALIDATION_ERROR', 'maxOpenTickets');
    expectError(await admin.put(`${GROUPS}/${g.id}/members/${agent.id}`, { skills: ['has space'] }), 422, 'VALIDATION_ERROR');
    expectError(await admin.put(`${GROUPS}/${g.id}/members/${agent2.id}`, { maxOpenTickets: 1 }), 404, 'NOT_FOUND');
    expect((await admin.del(`${GROUPS}/${g.id}/members/${agent.id}`)).status).toBe(204);
    expectError(await admin.del(`${GROUPS}/${g.id}/members/${agent.id}`), 404, 'NOT_FOUND');
  });

  it('refuses users who cannot take tickets: viewers, suspended users, unknown users', async () => {
    const g = await newGroup(admin);
    const suspended = await acct.addUser('member');
    expect((await client.request('PATCH', `/playbook/api/v1/users/${suspended.id}`, { token: acct.ownerKey, body: { status: 'suspended' } })).status).toBe(200);
    for (const userId of [viewer.id, suspended.id, 'usr_nobody']) expectError(await admin.post(`${GROUPS}/${g.id}/members`, { userId }), 422, 'VALIDATION_ERROR', 'userId');
    expectError(await admin.post(`${GROUPS}/${g.id}/members`, {}), 422, 'VALIDATION_ERROR', 'userId');
  });

  it('bulk adds 1..100 all or nothing, skipping existing members; bulk removes ignore non-members', async () => {
    const g = await newGroup(admin);
    await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id, maxOpenTickets: 2 });
    const refused = await admin.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: [agent2.id, viewer.id, 'usr_nobody'] });
    expectError(refused, 422, 'VALIDATION_ERROR', 'userIds.1');
    expect(refused.body.error.details.map((d: { field: string }) => d.field)).toEqual(['userIds.1', 'userIds.2']);
    expect((await admin.get(`${GROUPS}/${g.id}/members`)).body.data).toHaveLength(1);
    const ok = await admin.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: [agent.id, agent2.id, acct.ownerId] });
    expect(ok.status).toBe(201);
    expect(ok.body.data.added.map((m: { userId: string }) => m.userId)).toEqual([agent2.id, acct.ownerId]);
    expect(ok.body.data.alreadyMembers).toEqual([agent.id]);
    const members = (await admin.get(`${GROUPS}/${g.id}/members`)).body.data;
    expect(members.find((m: { userId: string }) => m.userId === agent.id).maxOpenTickets).toBe(2);
    expectError(await admin.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: [] }), 422, 'VALIDATION_ERROR', 'userIds');
    expectError(await admin.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: Array.from({ length: 101 }, (_, i) => `usr_${i}`) }), 422, 'VALIDATION_ERROR', 'userIds');
    expectError(await admin.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: 'x' }), 422, 'VALIDATION_ERROR', 'userIds');
    const removed = await admin.post(`${GROUPS}/${g.id}/members/bulk-remove`, { userIds: [agent.id, viewer.id] });
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual({ removed: [agent.id], notMembers: [viewer.id] });
    expect((await admin.get(`${GROUPS}/${g.id}/members`)).body.data.map((m: { userId: string }) => m.userId).sort()).toEqual([agent2.id, acct.ownerId].sort());
  });

  it('a bulk add of 100 users is one write', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const users = await insertAgents(other.accountId, 100);
    const g = await newGroup(d);
    const res = await d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: users });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.added).toHaveLength(100);
    expect((await d.get(`${GROUPS}/${g.id}`)).body.data.memberCount).toBe(100);
  });

  it('parallel bulk adds and removes leave a consistent member list', async () => {
    const other = await createTestAccount();
    const d = as(client, other.ownerKey);
    const ids = await insertAgents(other.accountId, 12);
    const g = await newGroup(d);
    const keep = ids.slice(0, 6);
    const drop = ids.slice(6);
    await d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: drop });
    const results = await Promise.all([
      d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: keep.slice(0, 3) }),
      d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: keep.slice(3) }),
      d.post(`${GROUPS}/${g.id}/members/bulk-remove`, { userIds: drop.slice(0, 3) }),
      d.post(`${GROUPS}/${g.id}/members/bulk-remove`, { userIds: drop.slice(3) }),
      d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: keep }),
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 201, 200, 200, 201]);
    const members = (await d.get(`${GROUPS}/${g.id}/members`)).body.data.map((m: { userId: string }) => m.userId).sort();
    expect(members).toEqual([...keep].sort());
    expect((await d.get(`${GROUPS}/${g.id}`)).body.data.memberCount).toBe(6);
  });
});

describe('groups: permissions and tenant isolation', () => {
  it('viewers read, agents and viewers cannot write; no credentials is 401', async () => {
    const g = await newGroup(admin);
    const v = as(client, viewer.key);
    const a = as(client, agent.key);
    expect((await v.get(GROUPS)).status).toBe(200);
    expect((await v.get(`${GROUPS}/${g.id}`)).status).toBe(200);
    expect((await v.get(`${GROUPS}/${g.id}/members`)).status).toBe(200);
    expect((await v.post(`${GROUPS}/${g.id}/distribution/test`, { ticket: {} })).status).toBe(200);
    for (const d of [v, a]) {
      expectError(await d.post(GROUPS, { name: 'x' }), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}`, { name: 'x' }), 403, 'FORBIDDEN');
      expectError(await d.del(`${GROUPS}/${g.id}`), 403, 'FORBIDDEN');
      expectError(await d.post(`${GROUPS}/${g.id}/members`, { userId: agent.id }), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}/members/${agent.id}`, {}), 403, 'FORBIDDEN');
      expectError(await d.del(`${GROUPS}/${g.id}/members/${agent.id}`), 403, 'FORBIDDEN');
      expectError(await d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: [agent.id] }), 403, 'FORBIDDEN');
      expectError(await d.post(`${GROUPS}/${g.id}/members/bulk-remove`, { userIds: [agent.id] }), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}/lead`, { userId: null }), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}/deactivate`, {}), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}/reactivate`, {}), 403, 'FORBIDDEN');
      expectError(await d.put(`${GROUPS}/${g.id}/default`, {}), 403, 'FORBIDDEN');
    }
    expectError(await client.request('GET', GROUPS), 401, 'UNAUTHORIZED');
    const adminUser = await acct.addUser('admin');
    expect((await as(client, adminUser.key).post(GROUPS, { name: 'By an admin' })).status).toBe(201);
  });

  it("another account's group is 404 everywhere; its users cannot be members (422); tickets cannot name it", async () => {
    const other = await createTestAccount();
    const theirs = await newGroup(as(client, other.ownerKey));
    const stranger = await other.addUser('member');
    const mine = await newGroup(admin);
    const paths: [string, string, unknown?][] = [
      ['GET', `${GROUPS}/${theirs.id}`],
      ['PUT', `${GROUPS}/${theirs.id}`, { name: 'x' }],
      ['DELETE', `${GROUPS}/${theirs.id}`],
      ['GET', `${GROUPS}/${theirs.id}/members`],
      ['POST', `${GROUPS}/${theirs.id}/members`, { userId: agent.id }],
      ['POST', `${GROUPS}/${theirs.id}/members/bulk`, { userIds: [agent.id] }],
      ['PUT', `${GROUPS}/${theirs.id}/default`, {}],
      ['PUT', `${GROUPS}/${theirs.id}/deactivate`, {}],
      ['POST', `${GROUPS}/${theirs.id}/distribution/test`, { ticket: {} }],
    ];
    for (const [method, path, body] of paths) expectError(await client.request(method, path, { token: acct.ownerKey, body }), 404, 'NOT_FOUND');
    expectError(await admin.post(`${GROUPS}/${mine.id}/members`, { userId: stranger.id }), 422, 'VALIDATION_ERROR', 'userId');
    expectError(await admin.post(`${GROUPS}/${mine.id}/members/bulk`, { userIds: [stranger.id] }), 422, 'VALIDATION_ERROR', 'userIds.0');
    expectError(await admin.put(`${GROUPS}/${mine.id}/members/${stranger.id}`, { maxOpenTickets: 1 }), 404, 'NOT_FOUND');
    expectError(await admin.del(`${GROUPS}/${mine.id}/members/${stranger.id}`), 404, 'NOT_FOUND');
    expectError(await admin.put(`${GROUPS}/${mine.id}/lead`, { userId: stranger.id }), 422, 'VALIDATION_ERROR', 'userId');
    expectError(await admin.post(TICKETS, { ticket: { subject: 'x', groupId: theirs.id } }), 422, 'VALIDATION_ERROR', 'groupId');
    expect((await as(client, other.ownerKey).get(`${GROUPS}/${theirs.id}`)).status).toBe(200);
  });

  it('tickets take a groupId of the account on create and update', async () => {
    const g = await newGroup(admin);
    const t = await newTicket(admin, { groupId: g.id });
    expect(t.groupId).toBe(g.id);
    const moved = await admin.put(`${TICKETS}/${t.id}`, { ticket: { groupId: null } });
    expect(moved.body.ticket.groupId).toBeNull();
    expectError(await admin.put(`${TICKETS}/${t.id}`, { ticket: { groupId: 'grp_nope' } }), 422, 'VALIDATION_ERROR', 'groupId');
  });
});
