import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newField, newTicket, type Desk } from '../support/desk.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/sla-policies';

const perPriority = (n: number) => ({ urgent: n, high: n * 2, normal: n * 3, low: n * 4 });
const targets = { firstReply: perPriority(10), nextReply: perPriority(20), resolution: perPriority(60) };
const policyBody = (over: Record<string, unknown> = {}) => ({ name: 'VIP', timeMode: 'calendarHours', conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }], targets, ...over });

let acct: TestAccount;
let admin: Desk;
beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
});

async function create(d: Desk, over: Record<string, unknown> = {}) {
  const res = await d.post(BASE, policyBody(over));
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

const errorFields = (res: { body: any }) => (res.body.error.details ?? []).map((d: { field: string }) => d.field);

describe('SLA policies: CRUD', () => {
  it('creates at the end of the order, lists by position, replaces and deletes', async () => {
    const a = await acct.addUser('admin');
    const d = as(client, a.key);
    const first = await create(d, { name: 'First', description: 'Top customers' });
    expect(first).toMatchObject({ id: expect.stringMatching(/^sla_/), name: 'First', description: 'Top customers', isActive: true, timeMode: 'calendarHours', targets, createdAt: expect.any(String) });
    const second = await create(d, { name: 'Second', timeMode: 'businessHours', conditions: [] });
    expect(second.position).toBeGreaterThan(first.position);

    const updated = await d.put(`${BASE}/${first.id}`, policyBody({ name: 'First, renamed', isActive: false }));
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ id: first.id, name: 'First, renamed', isActive: false, description: null, position: first.position, createdAt: first.createdAt });
    // A PUT that does not mention isActive leaves the policy off; one that says true turns it back on.
    const renamedAgain = await d.put(`${BASE}/${first.id}`, policyBody({ name: 'First, again' }));
    expect(renamedAgain.body.data).toMatchObject({ name: 'First, again', isActive: false });
    expect((await d.put(`${BASE}/${first.id}`, policyBody({ isActive: true }))).body.data.isActive).toBe(true);

    const del = await d.del(`${BASE}/${second.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await d.del(`${BASE}/${second.id}`)).status).toBe(404);
    expect((await d.put(`${BASE}/${second.id}`, policyBody())).status).toBe(404);
  });

  it('lists in evaluation order in the success envelope', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    const a = await create(d, { name: 'A' });
    const b = await create(d, { name: 'B' });
    const res = await d.get(BASE);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [a, b] });
  });
});

describe('SLA policies: validation (422 with details)', () => {
  const cases: { name: string; body: Record<string, unknown>; field: string }[] = [
    { name: 'a field/operator pair outside the spec table', body: policyBody({ conditions: [{ field: 'priority', operator: 'contains_any', value: ['high'] }] }), field: 'conditions.0.operator' },
    { name: 'an unknown condition field', body: policyBody({ conditions: [{ field: 'subject', operator: 'is', value: 'x' }] }), field: 'conditions.0.field' },
    { name: 'a priority value that is not a priority', body: policyBody({ conditions: [{ field: 'priority', operator: 'is', value: 'asap' }] }), field: 'conditions.0.value' },
    { name: 'is without a value', body: policyBody({ conditions: [{ field: 'type', operator: 'is' }] }), field: 'conditions.0.value' },
    { name: 'a target of 0 minutes', body: policyBody({ targets: { ...targets, firstReply: { ...perPriority(1), urgent: 0 } } }), field: 'targets.firstReply.urgent' },
    { name: 'a fractional target', body: policyBody({ targets: { ...targets, resolution: { ...perPriority(1), low: 1.5 } } }), field: 'targets.resolution.low' },
    { name: 'a missing priority in a target', body: policyBody({ targets: { ...targets, nextReply: { urgent: 1, high: 1, normal: 1 } } }), field: 'targets.nextReply.low' },
    { name: 'a missing metric', body: policyBody({ targets: { firstReply: perPriority(1), resolution: perPriority(1) } }), field: 'targets.nextReply' },
    { name: 'a name over 100 characters', body: policyBody({ name: 'x'.repeat(101) }), field: 'name' },
    { name: 'a description over 500 characters', body: policyBody({ description: 'x'.repeat(501) }), field: 'description' },
    { name: 'an unknown time mode', body: policyBody({ timeMode: 'officeHours' }), field: 'timeMode' },
    { name: 'a customField that is not a field of the account', body: policyBody({ conditions: [{ field: 'customField:fld_nope', operator: 'is_set' }] }), field: 'conditions.0.field' },
  ];
  it.each(cases)('refuses $name', async ({ body, field }) => {
    const res = await admin.post(BASE, body);
    expect(res.status, res.text).toBe(422);
    expect(res.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR' } });
    expect(errorFields(res)).toContain(field);
  });

  it('accepts a customField condition naming a field of the account', async () => {
    const field = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    await create(admin, { conditions: [{ field: `customField:${field.id}`, operator: 'contains_any', value: ['gold'] }] });
  });

  it('bad shapes are 400: malformed JSON, a body that is not an object', async () => {
    expect((await admin.raw('POST', BASE, '{"name":')).status).toBe(400);
    expect((await admin.raw('POST', BASE, '[]')).status).toBe(400);
    expect((await admin.post(`${BASE}/test`, { priority: 'high' })).status).toBe(400);
  });
});

describe('SLA policies: reorder', () => {
  it('takes every id exactly once and reorders; anything else is 422', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    const [a, b, c] = [await create(d, { name: 'a' }), await create(d, { name: 'b' }), await create(d, { name: 'c' })];
    const res = await d.put(`${BASE}/reorder`, { orderedIds: [c.id, a.id, b.id] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.map((p: { id: string }) => p.id)).toEqual([c.id, a.id, b.id]);
    expect((await d.get(BASE)).body.data.map((p: { id: string; position: number }) => [p.id, p.position])).toEqual([
      [c.id, 0],
      [a.id, 1],
      [b.id, 2],
    ]);

    for (const orderedIds of [[c.id, a.id], [c.id, a.id, b.id, a.id], [c.id, a.id, b.id, 'sla_unknown'], []]) {
      const bad = await d.put(`${BASE}/reorder`, { orderedIds });
      expect(bad.status, JSON.stringify(orderedIds)).toBe(422);
      expect(bad.body.error.code).toBe('VALIDATION_ERROR');
    }
    // A new policy still goes last after a reorder.
    const d4 = await create(d, { name: 'd' });
    expect((await d.get(BASE)).body.data.at(-1).id).toBe(d4.id);
  });
});

describe('SLA policies: concurrency', () => {
  it('concurrent creates each get their own position; a reorder racing creates never half-applies', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    const created = await Promise.all(Array.from({ length: 8 }, (_, i) => d.post(BASE, policyBody({ name: `p${i}` }))));
    expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(created.map((r) => r.body.data.position)).size).toBe(8);

    const ids = created.map((r) => r.body.data.id).reverse();
    const [reorder, extra] = await Promise.all([d.put(`${BASE}/reorder`, { orderedIds: ids }), d.post(BASE, policyBody({ name: 'late' }))]);
    expect(extra.status).toBe(201);
    // Either the reorder saw the set before the create (and the create went last) or it was refused as incomplete.
    expect([200, 409, 422]).toContain(reorder.status);
    const list = (await d.get(BASE)).body.data.map((p: { id: string }) => p.id);
    expect(list).toHaveLength(9);
    if (reorder.status === 200) expect(list).toEqual([...ids, extra.body.data.id]);
  });
});

describe('SLA policies: test endpoint', () => {
  it('reports the first active matching policy by position and its targets for the priority, or none', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    await create(d, { name: 'Inactive VIP', isActive: false });
    const vip = await create(d, { name: 'VIP' });
    await create(d, { name: 'Acme', conditions: [{ field: 'requester_domain', operator: 'is', value: 'acme.com' }] });

    const hit = await d.post(`${BASE}/test`, { ticket: { priority: 'urgent', tags: ['vip'], requesterEmail: 'ann@acme.com' } });
    expect(hit.status, hit.text).toBe(200);
    expect(hit.body).toEqual({ success: true, data: { matched: true, policy: vip, targets: { firstReply: 10, nextReply: 20, resolution: 60 } } });

    const domain = await d.post(`${BASE}/test`, { ticket: { priority: 'low', requesterEmail: 'bob@ACME.com' } });
    expect(domain.body.data).toMatchObject({ matched: true, policy: { name: 'Acme' }, targets: { firstReply: 40, nextReply: 80, resolution: 240 } });

    const none = await d.post(`${BASE}/test`, { ticket: { priority: 'high' } });
    expect(none.body.data).toEqual({ matched: false, policy: null, targets: null });

    const invalid = await d.post(`${BASE}/test`, { ticket: { priority: 'asap' } });
    expect(invalid.status).toBe(422);
  });
});

describe('SLA policies: business-hours schedule', () => {
  it('answers the default until set; validates zone and intervals; null resets', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    const def = await d.get(`${BASE}/schedule`);
    expect(def.body.data).toMatchObject({ isDefault: true, schedule: { timeZone: 'UTC', days: { mon: [{ start: '09:00', end: '17:00' }], sat: [] } } });

    const schedule = {
      timeZone: 'Europe/Berlin',
      days: {
        mon: [
          { start: '08:00', end: '12:00' },
          { start: '13:00', end: '17:00' },
        ],
      },
      holidays: ['2026-12-25'],
    };
    const set = await d.put(`${BASE}/schedule`, { schedule });
    expect(set.status, set.text).toBe(200);
    expect(set.body.data).toMatchObject({ isDefault: false, schedule: { timeZone: 'Europe/Berlin', days: { mon: schedule.days.mon, tue: [] }, holidays: ['2026-12-25'] } });

    for (const [bad, field] of [
      [{ ...schedule, timeZone: 'Mars/Olympus' }, 'schedule.timeZone'],
      [{ ...schedule, days: { mon: [{ start: '12:00', end: '09:00' }] } }, 'schedule.days.mon.0'],
      [
        {
          ...schedule,
          days: {
            mon: [
              { start: '09:00', end: '12:00' },
              { start: '11:00', end: '13:00' },
            ],
          },
        },
        'schedule.days.mon.1',
      ],
      [{ ...schedule, days: { mon: [{ start: '9:00', end: '12:00' }] } }, 'schedule.days.mon.0.start'],
      [{ ...schedule, days: {} }, 'schedule.days'],
      [{ ...schedule, holidays: ['2026-02-30'] }, 'schedule.holidays.0'],
    ] as const) {
      const res = await d.put(`${BASE}/schedule`, { schedule: bad });
      expect(res.status, JSON.stringify(bad)).toBe(422);
      expect(errorFields(res)).toContain(field);
    }
    expect((await d.put(`${BASE}/schedule`, { schedule: null })).body.data.isDefault).toBe(true);
  });
});

describe('SLA policies: permissions and tenant isolation', () => {
  it('viewers read; agents and viewers cannot write; admins can', async () => {
    const fresh = await createTestAccount();
    const owner = as(client, fresh.ownerKey);
    const policy = await create(owner);
    const ticket = await newTicket(owner);
    const viewer = as(client, (await fresh.addUser('viewer')).key);
    const agent = as(client, (await fresh.addUser('member')).key);

    expect((await viewer.get(BASE)).status).toBe(200);
    expect((await viewer.get(`${BASE}/schedule`)).status).toBe(200);
    expect((await viewer.get(`${BASE}/ticket/${ticket.id}`)).status).toBe(200);
    expect((await viewer.post(`${BASE}/test`, { ticket: {} })).status).toBe(200);
    for (const d of [viewer, agent]) {
      const writes = [
        await d.post(BASE, policyBody()),
        await d.put(`${BASE}/${policy.id}`, policyBody()),
        await d.del(`${BASE}/${policy.id}`),
        await d.put(`${BASE}/reorder`, { orderedIds: [policy.id] }),
        await d.post(`${BASE}/recompute`, {}),
        await d.put(`${BASE}/schedule`, { schedule: null }),
      ];
      expect(writes.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403]);
      expect(writes[0].body).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    }
    expect((await client.request('GET', BASE)).status).toBe(401);
  });

  it("another account's policies and tickets answer 404 and never show in lists", async () => {
    const mine = await createTestAccount();
    const theirs = await createTestAccount();
    const me = as(client, mine.ownerKey);
    const them = as(client, theirs.ownerKey);
    const policy = await create(them);
    const ticket = await newTicket(them);
    expect((await me.put(`${BASE}/${policy.id}`, policyBody())).status).toBe(404);
    expect((await me.del(`${BASE}/${policy.id}`)).status).toBe(404);
    expect((await me.get(`${BASE}/ticket/${ticket.id}`)).status).toBe(404);
    expect((await me.get(BASE)).body.data).toEqual([]);
    expect((await me.put(`${BASE}/reorder`, { orderedIds: [policy.id] })).status).toBe(422);
    expect((await me.post(`${BASE}/test`, { ticket: { tags: ['vip'] } })).body.data.matched).toBe(false);
    expect((await them.get(BASE)).body.data).toHaveLength(1);
  });
});

describe('SLA state of a ticket', () => {
  it('is worked out from the ticket before the state consumer has seen it; 404 for an unknown ticket', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    const policy = await create(d);
    const ticket = await newTicket(d, { tags: ['vip'], priority: 'urgent' });
    const res = await d.get(`${BASE}/ticket/${ticket.id}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      ticketId: ticket.id,
      policyId: policy.id,
      policyName: 'VIP',
      breached: false,
      paused: false,
      metrics: { firstReply: { targetMinutes: 10, startedAt: ticket.createdAt, achievedAt: null }, nextReply: null, resolution: { targetMinutes: 60 } },
    });
    expect((await d.get(`${BASE}/ticket/tkt_unknown`)).status).toBe(404);
  });

  it('recompute answers 202 with the number of open tickets', async () => {
    const fresh = await createTestAccount();
    const d = as(client, fresh.ownerKey);
    await newTicket(d);
    await newTicket(d, { status: 'pending' });
    await newTicket(d, { status: 'resolved' });
    const res = await d.post(`${BASE}/recompute`, {});
    expect(res.status, res.text).toBe(202);
    expect(res.body).toEqual({ success: true, data: { accepted: true, ticketCount: 2 } });
  });
});
