import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, newField, newTicket, TICKETS } from '../support/desk.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/automations';

const closeTagged = (tag = 'x') => ({ all: [{ field: 'tags', op: 'containsoneormoreof', value: [tag] }], actions: [{ field: 'status', value: 'closed' }] });
const body = (name: string, rule: unknown = closeTagged(), extra: Record<string, unknown> = {}) => ({ name, rule, ...extra });

async function setup() {
  const acct = await createTestAccount();
  const admin = as(client, acct.ownerKey);
  const agent = as(client, (await acct.addUser('member')).key);
  const viewer = as(client, (await acct.addUser('viewer')).key);
  return { acct, admin, agent, viewer };
}

describe('automations CRUD', () => {
  it('creates at the end of the order, lists by position, and lets viewers read but only admins write', async () => {
    // Arrange
    const { admin, agent, viewer } = await setup();

    // Act
    const first = await admin.post(BASE, body('Close x', closeTagged(), { description: 'tidy up' }));
    const second = await admin.post(BASE, body('Close y', closeTagged('y'), { isActive: false }));

    // Assert
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^aut_/),
        name: 'Close x',
        description: 'tidy up',
        isActive: true,
        rule: closeTagged(),
        position: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    });
    expect(second.body.data).toMatchObject({ position: 2, isActive: false, description: null });
    const listed = await viewer.get(BASE);
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((a: { id: string; position: number }) => [a.id, a.position])).toEqual([
      [first.body.data.id, 1],
      [second.body.data.id, 2],
    ]);
    for (const who of [agent, viewer]) {
      expect((await who.post(BASE, body('nope'))).status).toBe(403);
      expect((await who.put(`${BASE}/${first.body.data.id}`, { name: 'nope' })).status).toBe(403);
      expect((await who.del(`${BASE}/${first.body.data.id}`)).status).toBe(403);
      expect((await who.put(`${BASE}/reorder`, { orderedIds: [] })).body.error.code).toBe('FORBIDDEN');
    }
  });

  it('refuses invalid rules with 422 details naming the path, and malformed bodies with 400', async () => {
    const { admin } = await setup();
    const rule = {
      all: [
        { field: 'status', op: 'equals', value: 'new' },
        { field: 'priority', op: 'equals', value: 'high' },
        { field: 'subject', op: 'greaterthan', value: 'a' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    };
    const cases: [unknown, string][] = [
      [body('r', rule), 'rule.all.2.op'],
      [body('r', { any: [{ field: 'colour', op: 'equals', value: 'red' }], actions: [{ field: 'status', value: 'closed' }] }), 'rule.any.0.field'],
      [body('r', { all: [{ field: 'status', op: 'near', value: 'new' }], actions: [{ field: 'status', value: 'closed' }] }), 'rule.all.0.op'],
      [body('r', { all: [{ field: 'status', op: 'equals', value: 'frozen' }], actions: [{ field: 'status', value: 'closed' }] }), 'rule.all.0.value'],
      [body('r', { all: [{ field: 'hoursSinceCreated', op: 'contains', value: '3' }], actions: [{ field: 'status', value: 'closed' }] }), 'rule.all.0.op'],
      [body('r', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [] }), 'rule.actions'],
      [body('r', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'status', value: 'done' }] }), 'rule.actions.0.value'],
      [body('r', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'subject', value: 'x' }] }), 'rule.actions.0.field'],
      [body('r', { actions: [{ field: 'status', value: 'closed' }] }), 'rule'],
      [body('x'.repeat(129)), 'name'],
      [body('r', closeTagged(), { description: 'd'.repeat(513) }), 'description'],
      [{ name: 'no rule' }, 'rule'],
    ];
    for (const [b, path] of cases) {
      const res = await admin.post(BASE, b);
      expect(res.status, JSON.stringify(b)).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(
        res.body.error.details.map((d: { field: string }) => d.field),
        JSON.stringify(res.body),
      ).toContain(path);
    }
    expect((await admin.raw('POST', BASE, '{not json')).status).toBe(400);
    expect((await admin.raw('POST', BASE, '[1]')).status).toBe(400);
    // Nothing was half-written.
    expect((await admin.get(BASE)).body.data).toEqual([]);
  });

  it('checks customField conditions and actions against the field type and its options', async () => {
    const { admin } = await setup();
    const tier = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    const count = await newField(admin, { type: 'number' });
    const ok = await admin.post(
      BASE,
      body('gold', {
        all: [
          { field: `customField:${tier.id}`, op: 'equals', value: 'gold' },
          { field: `customField:${count.id}`, op: 'greaterthan', value: 3 },
        ],
        actions: [{ field: `customField:${tier.id}`, value: 'gold' }],
      }),
    );
    expect(ok.status).toBe(201);
    const cases: [unknown, string][] = [
      [{ all: [{ field: `customField:${tier.id}`, op: 'equals', value: 'platinum' }], actions: [{ field: 'priority', value: 'high' }] }, 'rule.all.0.value'],
      [{ all: [{ field: `customField:${count.id}`, op: 'startswith', value: '1' }], actions: [{ field: 'priority', value: 'high' }] }, 'rule.all.0.op'],
      [{ all: [{ field: 'customField:nope', op: 'equals', value: 'x' }], actions: [{ field: 'priority', value: 'high' }] }, 'rule.all.0.field'],
      [{ all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: `customField:${count.id}`, value: 'many' }] }, 'rule.actions.0.value'],
    ];
    for (const [rule, path] of cases) {
      const res = await admin.post(BASE, body('bad', rule));
      expect(res.status).toBe(422);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(path);
    }
  });

  it('updates only the given fields, deletes with 204, and moves later automations up', async () => {
    const { admin } = await setup();
    const a = (await admin.post(BASE, body('A'))).body.data;
    const b = (await admin.post(BASE, body('B'))).body.data;

    const renamed = await admin.put(`${BASE}/${b.id}`, { name: 'B2', isActive: false });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ id: b.id, name: 'B2', isActive: false, rule: b.rule, position: 2, createdAt: b.createdAt });
    const newRule = { any: [{ field: 'priority', op: 'equals', value: 'urgent' }], actions: [{ field: 'addTags', value: ['hot'] }] };
    expect((await admin.put(`${BASE}/${b.id}`, { rule: newRule })).body.data).toMatchObject({ name: 'B2', rule: newRule });
    expect((await admin.put(`${BASE}/${b.id}`, { rule: { actions: [] } })).status).toBe(422);

    const deleted = await admin.del(`${BASE}/${a.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await admin.del(`${BASE}/${a.id}`)).status).toBe(404);
    expect((await admin.put(`${BASE}/${a.id}`, { name: 'ghost' })).status).toBe(404);
    expect((await admin.get(BASE)).body.data.map((x: { id: string; position: number }) => [x.id, x.position])).toEqual([[b.id, 1]]);
  });

  it('reorders only with every id exactly once; otherwise 422 and nothing changes', async () => {
    const { admin } = await setup();
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three']) ids.push((await admin.post(BASE, body(name))).body.data.id);

    const reordered = await admin.put(`${BASE}/reorder`, { orderedIds: [ids[2], ids[0], ids[1]] });
    expect(reordered.status).toBe(200);
    expect(reordered.body.data.map((a: { name: string; position: number }) => `${a.position}:${a.name}`)).toEqual(['1:three', '2:one', '3:two']);

    const bad: [string[], string][] = [
      [[ids[0], ids[1]], 'orderedIds'],
      [[ids[0], ids[1], ids[1]], 'orderedIds.2'],
      [[ids[0], ids[1], ids[2], 'aut_00000000000000000000000000'], 'orderedIds.3'],
    ];
    for (const [orderedIds, path] of bad) {
      const res = await admin.put(`${BASE}/reorder`, { orderedIds });
      expect(res.status).toBe(422);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(path);
    }
    expect((await admin.put(`${BASE}/reorder`, { orderedIds: 'nope' })).status).toBe(422);
    expect((await admin.get(BASE)).body.data.map((a: { name: string }) => a.name)).toEqual(['three', 'one', 'two']);
  });

  it('keeps positions exact under concurrent creates', async () => {
    const { admin } = await setup();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => admin.post(BASE, body(`c${i}`))));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    const listed = (await admin.get(BASE)).body.data;
    expect(listed).toHaveLength(8);
    expect(listed.map((a: { position: number }) => a.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("isolates tenants: another account's automations and tickets answer 404", async () => {
    const mine = await setup();
    const other = await setup();
    const a = (await mine.admin.post(BASE, body('mine'))).body.data;
    const ticket = await newTicket(mine.admin, { tags: ['x'] });

    expect((await other.admin.get(BASE)).body.data).toEqual([]);
    expect((await other.admin.put(`${BASE}/${a.id}`, { name: 'stolen' })).status).toBe(404);
    expect((await other.admin.del(`${BASE}/${a.id}`)).status).toBe(404);
    expect((await other.admin.put(`${BASE}/reorder`, { orderedIds: [a.id] })).status).toBe(422);
    expect((await other.admin.post(`${BASE}/test`, { ticketId: ticket.id })).status).toBe(404);
    expect((await mine.admin.get(BASE)).body.data).toMatchObject([{ id: a.id, name: 'mine' }]);
  });
});

describe('automation dry run (POST /automations/test)', () => {
  it('explains each automation and condition for a stored ticket, and writes nothing', async () => {
    // Arrange
    const { admin, viewer } = await setup();
    const ticket = await newTicket(admin, { tags: ['x', 'vip'], priority: 'high' });
    const skip = (await admin.post(BASE, body('urgent only', { all: [{ field: 'priority', op: 'equals', value: 'urgent' }], actions: [{ field: 'status', value: 'closed' }] }))).body.data;
    const hit = (
      await admin.post(
        BASE,
        body('vip', {
          all: [{ field: 'tags', op: 'containsoneormoreof', value: ['VIP'] }],
          any: [
            { field: 'subject', op: 'contains', value: 'fire' },
            { field: 'priority', op: 'equals', value: 'low' },
          ],
          actions: [
            { field: 'priority', value: 'urgent' },
            { field: 'addTags', value: ['escalated'] },
          ],
        }),
      )
    ).body.data;
    const later = (await admin.post(BASE, body('also matches', closeTagged()))).body.data;

    // Act
    const res = await viewer.post(`${BASE}/test`, { ticketId: ticket.id });

    // Assert
    expect(res.status).toBe(200);
    const data = res.body.data;
    expect(data.matchedAutomationId).toBe(hit.id);
    expect(data.changes).toEqual([
      { field: 'priority', from: 'high', to: 'urgent' },
      { field: 'tags', from: ['x', 'vip'], to: ['x', 'vip', 'escalated'] },
    ]);
    expect(data.automations.map((a: { id: string; matched: boolean; position: number }) => [a.id, a.position, a.matched])).toEqual([
      [skip.id, 1, false],
      [hit.id, 2, true],
      [later.id, 3, true],
    ]);
    expect(data.automations[0].conditions).toEqual([{ group: 'all', index: 0, field: 'priority', op: 'equals', value: 'urgent', actual: 'high', held: false }]);
    expect(data.automations[1].conditions.map((c: { held: boolean; actual: unknown }) => [c.actual, c.held])).toEqual([
      [['x', 'vip'], true],
      ['Printer on fire', true],
      ['high', false],
    ]);
    const after = await admin.get(`${TICKETS}/${ticket.id}`);
    expect(after.body.ticket).toEqual(ticket);
  });

  it('takes an inline ticket and a clock for time conditions, and wants exactly one of ticketId or ticket', async () => {
    const { admin } = await setup();
    const stale = (
      await admin.post(
        BASE,
        body('stale', {
          all: [
            { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 48 },
            { field: 'status', op: 'equals', value: 'pending' },
          ],
          actions: [{ field: 'status', value: 'closed' }],
        }),
      )
    ).body.data;
    const ticket = { status: 'pending', updatedAt: '2026-01-01T00:00:00.000Z', createdAt: '2026-01-01T00:00:00.000Z' };

    const early = await admin.post(`${BASE}/test`, { ticket, now: '2026-01-02T23:00:00.000Z' });
    const late = await admin.post(`${BASE}/test`, { ticket, now: '2026-01-03T00:00:00.000Z' });

    expect(early.body.data.matchedAutomationId).toBeNull();
    expect(early.body.data.automations[0].conditions[0]).toMatchObject({ field: 'hoursSinceUpdated', actual: 47, held: false });
    expect(late.body.data).toMatchObject({ now: '2026-01-03T00:00:00.000Z', matchedAutomationId: stale.id, changes: [{ field: 'status', from: 'pending', to: 'closed' }] });
    expect((await admin.post(`${BASE}/test`, {})).status).toBe(422);
    expect((await admin.post(`${BASE}/test`, { ticketId: 'tkt_x', ticket })).status).toBe(422);
    expect((await admin.post(`${BASE}/test`, { ticket: { status: 'melted' } })).status).toBe(422);
    expect((await admin.post(`${BASE}/test`, { ticketId: 'tkt_missing' })).status).toBe(404);
  });
});
