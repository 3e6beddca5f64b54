import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway, type TestAccount } from '../support/api.ts';
import { as, FIELDS, optionsPath, type Desk, type Json } from '../support/desk.ts';
import { GROUPS } from '../support/groups.ts';
import { storedApiKey } from '../support/store.ts';
import { USERS } from '../support/users.ts';

/**
 * Audits of account settings (decisions §15): users, API keys and the plan,
 * webhooks, automations, SLA policies, groups, ticket fields, views and
 * macros, each recorded with the change, through the API on the local emulators.
 */
const { client } = useGateway();

const AUDITS = '/helpdesk/api/v1/audits';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let acct: TestAccount;
let admin: Desk;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
});

/** One resource's audits, oldest first. */
async function auditsOf(d: Desk, type: string, id: string): Promise<Json[]> {
  const res = await d.get(`${AUDITS}?resource_type=${type}&resource_id=${encodeURIComponent(id)}&page_size=100`);
  expect(res.status, res.text).toBe(200);
  expect(res.body.meta.hasMore).toBe(false);
  return res.body.audits;
}

/** Every audit of the caller's account, following links.next. */
async function wholeLog(d: Desk): Promise<Json[]> {
  const audits: Json[] = [];
  let path: string | null = `${AUDITS}?page_size=100`;
  for (let pages = 0; path; pages++) {
    if (pages > 50) throw new Error('more than 50 pages of audits');
    const res = await d.get(path);
    expect(res.status, res.text).toBe(200);
    audits.push(...res.body.audits);
    path = res.body.links.next;
  }
  return audits;
}

/** The audit an owner's API call records. */
const byOwner = (type: string, id: string, changes: Json[], deleted = false) => ({
  id: expect.stringMatching(/^aud_/),
  createdAt: expect.stringMatching(ISO),
  resource: { type, id },
  actor: { type: 'user', id: acct.ownerId },
  via: 'api',
  changes,
  messageId: null,
  deleted,
});

/** The audit an admin CLI command (the accounts service) records. */
const bySystem = (type: string, id: string, changes: Json[]) => ({
  id: expect.stringMatching(/^aud_/),
  createdAt: expect.stringMatching(ISO),
  resource: { type, id },
  actor: { type: 'system', id: null },
  via: 'api',
  changes,
  messageId: null,
  deleted: false,
});

const created = (values: Record<string, unknown>) => Object.entries(values).map(([field, to]) => ({ field, from: null, to }));

const ALL_SCOPES = ['users:read', 'users:write', 'desk:read', 'desk:write'];

describe('users', () => {
  it("records a user's invitation and the owner's role change with before and after, actor the owner, via api", async () => {
    // Arrange
    const email = uniqueEmail('promoted');
    const invited = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'Pat Promoted', role: 'member', send_invitation: false } });
    expect(invited.status, invited.text).toBe(201);
    const userId = invited.body.id;

    // Act
    const promoted = await client.request('PATCH', `${USERS}/${userId}`, { token: acct.ownerKey, body: { role: 'admin' } });
    const unchanged = await client.request('PATCH', `${USERS}/${userId}`, { token: acct.ownerKey, body: { role: 'admin' } });

    // Assert: the answers are as ever, and only the change that changed something is audited
    expect(promoted.status, promoted.text).toBe(200);
    expect(promoted.body.role).toBe('admin');
    expect(unchanged.status).toBe(200);
    const audits = await auditsOf(admin, 'user', userId);
    expect(audits).toEqual([
      byOwner('user', userId, created({ email, name: 'Pat Promoted', role: 'member', status: 'invited' })),
      byOwner('user', userId, [{ field: 'role', from: 'member', to: 'admin' }]),
    ]);
    expect(audits[1].createdAt).toBe(promoted.body.updated_at);
  });

  it('records an ownership transfer as two audits and a delete with deleted true and its export tombstone', async () => {
    // Arrange: an account of its own, whose owner hands over and then deletes the new admin
    const own = await createTestAccount();
    const d = as(client, own.ownerKey);
    const heir = await own.addUser('admin');
    const gone = await own.addUser('member');

    // Act
    const transfer = await client.request('PATCH', `${USERS}/${heir.id}`, { token: own.ownerKey, body: { role: 'owner' } });
    const del = await client.request('DELETE', `${USERS}/${gone.id}`, { token: heir.key });

    // Assert
    expect(transfer.status, transfer.text).toBe(200);
    expect(del.status, del.text).toBe(204);
    const actor = (id: string) => ({ type: 'user', id });
    const heirAudits = await auditsOf(d, 'user', heir.id);
    expect(heirAudits.at(-1)).toMatchObject({ actor: actor(own.ownerId), via: 'api', changes: [{ field: 'role', from: 'admin', to: 'owner' }], deleted: false });
    const formerOwner = await auditsOf(as(client, heir.key), 'user', own.ownerId);
    expect(formerOwner.map((a) => a.changes)).toEqual([created({ email: expect.any(String), name: 'Olive Owner', role: 'owner', status: 'active' }), [{ field: 'role', from: 'owner', to: 'admin' }]]);
    expect(formerOwner[1].actor).toEqual(actor(own.ownerId));
    const deleted = await auditsOf(as(client, heir.key), 'user', gone.id);
    expect(deleted.at(-1)).toMatchObject({ actor: actor(heir.id), via: 'api', changes: [], deleted: true });
    const { ddb, tableName } = await import('#shared/db/client.ts');
    const { GetCommand } = await import('@aws-sdk/lib-dynamodb');
    const tomb = await ddb.send(new GetCommand({ TableName: tableName(), Key: { pk: `A#${own.accountId}`, sk: `TOMB#USER#${gone.id}` } }));
    expect(tomb.Item).toMatchObject({ type: 'tombstone', id: gone.id, updatedAt: deleted.at(-1).createdAt });
  });
});

describe('webhooks', () => {
  it('records a create and an update with their fields and never the signing secret', async () => {
    // Arrange
    const webhook = { name: 'Ops', targetUrl: 'https://hooks.example.com/desk', events: ['ticket.created'] };

    // Act
    const made = await admin.post('/helpdesk/api/v1/webhooks', { webhook });
    const id = made.body.webhook.id;
    const renamed = await admin.put(`/helpdesk/api/v1/webhooks/${id}`, { webhook: { name: 'Ops renamed' } });

    // Assert
    expect(made.status, made.text).toBe(201);
    expect(made.body.webhook.signingSecret).toMatch(/^whsec_/);
    expect(renamed.status, renamed.text).toBe(200);
    const audits = await auditsOf(admin, 'webhook', id);
    expect(audits).toEqual([
      byOwner('webhook', id, created({ name: 'Ops', targetUrl: webhook.targetUrl, events: ['ticket.created'], active: true })),
      byOwner('webhook', id, [{ field: 'name', from: 'Ops', to: 'Ops renamed' }]),
    ]);
    const text = JSON.stringify(await wholeLog(admin));
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('signingSecret');
    expect(text).not.toContain(made.body.webhook.signingSecret.slice(6));
  });
});

describe('API keys and the plan (admin CLI)', () => {
  it("records a key's create and revoke by id, the plan change, and the account's creation, with no key material", async () => {
    // Arrange
    const own = await createTestAccount();
    const d = as(client, own.ownerKey);
    const accounts = await import('#shared/accounts/service.ts');
    const { hashApiKey } = await import('#shared/auth/api-keys.ts');

    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();

    // Act
    const key = await accounts.createApiKey(own.accountId, own.ownerId, 'ci', { scopes: ['desk:read'], expiresAt });
    await accounts.revokeApiKey(own.accountId, key.id);
    await accounts.revokeApiKey(own.accountId, key.id);
    await accounts.setPlan(own.accountId, 'paid');
    await accounts.setPlan(own.accountId, 'paid');

    // Assert: one audit per change, none for the repeats
    const keyAudits = await auditsOf(d, 'api_key', key.id);
    expect(keyAudits).toEqual([
      bySystem('api_key', key.id, created({ userId: own.ownerId, name: 'ci', scopes: ['desk:read'], expiresAt })),
      bySystem('api_key', key.id, [{ field: 'revokedAt', from: null, to: expect.stringMatching(ISO) }]),
    ]);
    expect((await storedApiKey(own.accountId, key.id))?.revokedAt).toBe(keyAudits[1].changes[0].to);
    expect(await auditsOf(d, 'account', own.accountId)).toEqual([
      bySystem('account', own.accountId, created({ name: 'Test Co', plan: 'enterprise' })),
      bySystem('account', own.accountId, [{ field: 'plan', from: 'enterprise', to: 'paid' }]),
    ]);
    const log = await wholeLog(d);
    const ownerKeyAudit = log.filter((a) => a.resource.type === 'api_key' && a.resource.id !== key.id);
    expect(ownerKeyAudit).toEqual([bySystem('api_key', expect.stringMatching(/^key_/), created({ userId: own.ownerId, name: 'Owner key', scopes: ALL_SCOPES }))]);
    const text = JSON.stringify(log);
    expect(text).not.toContain('sk_');
    for (const secret of [key.apiKey, own.ownerKey]) expect(text).not.toContain(hashApiKey(secret));
  });

  it("records a key created and revoked through the API as the calling user's, with its scopes and expiry and no key material", async () => {
    // Arrange
    const own = await createTestAccount();
    const d = as(client, own.ownerKey);
    const member = await own.addUser('member');
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();

    // Act
    const made = await client.request('POST', '/playbook/api/v1/api-keys', { token: own.ownerKey, body: { name: 'sync', scopes: ['desk:read'], expires_at: expiresAt, user_id: member.id } });
    expect(made.status, made.text).toBe(201);
    const revoked = await client.request('DELETE', `/playbook/api/v1/api-keys/${made.body.id}`, { token: member.key });
    expect(revoked.status, revoked.text).toBe(204);

    // Assert
    const actor = (id: string) => ({ type: 'user', id });
    expect(await auditsOf(d, 'api_key', made.body.id)).toEqual([
      { ...bySystem('api_key', made.body.id, created({ userId: member.id, name: 'sync', scopes: ['desk:read'], expiresAt })), actor: actor(own.ownerId) },
      { ...bySystem('api_key', made.body.id, [{ field: 'revokedAt', from: null, to: expect.stringMatching(ISO) }]), actor: actor(member.id) },
    ]);
    const text = JSON.stringify(await wholeLog(d));
    expect(text).not.toContain(made.body.key);
    expect(text).not.toContain(made.body.key.slice(3));
  });
});

describe('automations, SLA policies, groups and ticket fields', () => {
  it("records an automation created through the API, and a reorder as the account's automations.order", async () => {
    const rule = { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['x'] }], actions: [{ field: 'status', value: 'closed' }] };
    const first = await admin.post('/helpdesk/api/automations', { name: 'Close x', rule });
    const second = await admin.post('/helpdesk/api/automations', { name: 'Close y', rule, isActive: false });
    expect(first.status, first.text).toBe(201);
    expect(second.status, second.text).toBe(201);
    const [a, b] = [first.body.data.id, second.body.data.id];
    const reordered = await admin.put('/helpdesk/api/automations/reorder', { orderedIds: [b, a] });
    expect(reordered.status, reordered.text).toBe(200);

    expect(await auditsOf(admin, 'automation', a)).toEqual([byOwner('automation', a, created({ name: 'Close x', isActive: true, rule: first.body.data.rule }))]);
    const orders = (await auditsOf(admin, 'account', acct.accountId)).filter((x) => x.changes[0]?.field === 'automations.order');
    expect(orders).toEqual([byOwner('account', acct.accountId, [{ field: 'automations.order', from: [a, b], to: [b, a] }])]);
  });

  it("records an SLA policy created through the API, and the business hours as the account's slaPolicies.schedule", async () => {
    const perPriority = { urgent: 10, high: 20, normal: 30, low: 40 };
    const body = {
      name: 'VIP',
      timeMode: 'calendarHours',
      conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }],
      targets: { firstReply: perPriority, nextReply: perPriority, resolution: perPriority },
    };
    const res = await admin.post('/helpdesk/api/sla-policies', body);
    expect(res.status, res.text).toBe(201);
    const p = res.body.data;
    const schedule = await admin.put('/helpdesk/api/sla-policies/schedule', { schedule: { timeZone: 'Europe/Berlin', days: { mon: [{ start: '08:00', end: '12:00' }] } } });
    expect(schedule.status, schedule.text).toBe(200);

    expect(await auditsOf(admin, 'sla_policy', p.id)).toEqual([
      byOwner('sla_policy', p.id, created({ name: 'VIP', isActive: true, timeMode: 'calendarHours', conditions: p.conditions, targets: p.targets })),
    ]);
    const hours = (await auditsOf(admin, 'account', acct.accountId)).filter((x) => x.changes[0]?.field === 'slaPolicies.schedule');
    expect(hours).toEqual([byOwner('account', acct.accountId, [{ field: 'slaPolicies.schedule', from: null, to: schedule.body.data.schedule }])]);
  });

  it('records a group created through the API and a member added as members.<userId>', async () => {
    const agent = await acct.addUser('member');
    const res = await admin.post(GROUPS, { name: 'Tier 1' });
    expect(res.status, res.text).toBe(201);
    const g = res.body.data;
    const added = await admin.post(`${GROUPS}/${g.id}/members`, { userId: agent.id, skills: ['billing'] });
    expect(added.status, added.text).toBe(201);

    expect(await auditsOf(admin, 'group', g.id)).toEqual([
      byOwner('group', g.id, created({ name: 'Tier 1', isPrivate: false, distributionMode: 'manual', isActive: true, isDefault: g.isDefault })),
      byOwner('group', g.id, [{ field: `members.${agent.id}`, from: null, to: { maxOpenTickets: null, skills: ['billing'] } }]),
    ]);
  });

  it('records a ticket field with its options created through the API, and a default moved between options', async () => {
    const res = await admin.post(FIELDS, {
      ticketField: {
        title: 'Plan tier',
        type: 'dropdown',
        options: [
          { name: 'Gold', value: 'gold', default: true },
          { name: 'Silver', value: 'silver' },
        ],
      },
    });
    expect(res.status, res.text).toBe(201);
    const f = res.body.ticketField;
    const [gold, silver] = f.options;
    const moved = await admin.put(`${optionsPath(f.id)}/${silver.id}`, { customFieldOption: { default: true } });
    expect(moved.status, moved.text).toBe(200);

    expect(await auditsOf(admin, 'ticket_field', f.id)).toEqual([
      byOwner('ticket_field', f.id, [
        ...created({
          title: 'Plan tier',
          fieldKey: f.fieldKey,
          type: 'dropdown',
          position: f.position,
          active: true,
          requiredForAgents: false,
          requiredForEndUsers: false,
          visibleToEndUsers: true,
          editableByEndUsers: true,
        }),
        { field: `options.${gold.id}`, from: null, to: { name: 'Gold', value: 'gold', default: true } },
        { field: `options.${silver.id}`, from: null, to: { name: 'Silver', value: 'silver', default: false } },
      ]),
      byOwner('ticket_field', f.id, [
        { field: `options.${silver.id}`, from: { name: 'Silver', value: 'silver', default: false }, to: { name: 'Silver', value: 'silver', default: true } },
        { field: `options.${gold.id}`, from: { name: 'Gold', value: 'gold', default: true }, to: { name: 'Gold', value: 'gold', default: false } },
      ]),
    ]);
  });
});

describe('views and macros', () => {
  it('records a view and a macro created, changed and deleted through the API, and a PUT of the same values not at all', async () => {
    // Arrange
    const conditions = { all: [{ field: 'status', operator: 'is', value: 'open' }], any: [] };
    const view = (await admin.post('/helpdesk/api/v1/views', { view: { title: 'Open', conditions } })).body.view;
    const actions = [{ field: 'priority', value: 'high' }];
    const macro = (await admin.post('/helpdesk/api/v1/macros', { macro: { title: 'Raise', actions } })).body.macro;
    // Act
    for (const [path, body] of [
      [`/helpdesk/api/v1/views/${view.id}`, { view: { title: 'Open ones' } }],
      [`/helpdesk/api/v1/views/${view.id}`, { view: { title: 'Open ones' } }],
      [`/helpdesk/api/v1/macros/${macro.id}`, { macro: { actions: [{ field: 'priority', value: 'urgent' }] } }],
    ] as const)
      expect((await admin.put(path, body)).status).toBe(200);
    expect((await admin.del(`/helpdesk/api/v1/views/${view.id}`)).status).toBe(204);
    expect((await admin.del(`/helpdesk/api/v1/macros/${macro.id}`)).status).toBe(204);
    // Assert
    expect(await auditsOf(admin, 'view', view.id)).toEqual([
      byOwner('view', view.id, created({ title: 'Open', conditions, sort: { by: 'updatedAt', order: 'desc' }, personal: false })),
      byOwner('view', view.id, [{ field: 'title', from: 'Open', to: 'Open ones' }]),
      byOwner('view', view.id, [], true),
    ]);
    expect(await auditsOf(admin, 'macro', macro.id)).toEqual([
      byOwner('macro', macro.id, created({ title: 'Raise', actions, personal: false })),
      byOwner('macro', macro.id, [{ field: 'actions', from: actions, to: [{ field: 'priority', value: 'urgent' }] }]),
      byOwner('macro', macro.id, [], true),
    ]);
  });
});

describe('who reads the audit log', () => {
  it('refuses agents and viewers with 403 FORBIDDEN', async () => {
    for (const role of ['member', 'viewer'] as const) {
      const user = await acct.addUser(role);
      const res = await client.request('GET', AUDITS, { token: user.key });
      expect(res.status, `${role}: ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    }
  });

  it("shows an account's admin none of another account's audits", async () => {
    // Arrange: the first account has audits of every kind above; the other makes one of its own
    const other = await createTestAccount();
    const otherAdmin = as(client, other.ownerKey);
    const mine = await admin.post('/helpdesk/api/v1/webhooks', { webhook: { name: 'Mine', targetUrl: 'https://hooks.example.com/mine', events: ['ticket.created'] } });
    expect(mine.status, mine.text).toBe(201);

    // Act
    const theirs = await wholeLog(otherAdmin);
    const probe = await otherAdmin.get(`${AUDITS}?resource_type=webhook&resource_id=${mine.body.webhook.id}`);

    // Assert
    expect(probe.status).toBe(200);
    expect(probe.body.audits).toEqual([]);
    expect(theirs.length).toBeGreaterThan(0);
    const text = JSON.stringify(theirs);
    const firstIds = [acct.accountId, acct.ownerId, mine.body.webhook.id, ...(await wholeLog(admin)).flatMap((a) => [a.id, a.resource.id])];
    for (const id of new Set(firstIds)) expect(text).not.toContain(id);
    expect(new Set(theirs.map((a) => a.resource.id))).toEqual(new Set([other.accountId, other.ownerId, ...theirs.filter((a) => a.resource.type === 'api_key').map((a) => a.resource.id)]));
  });
});
