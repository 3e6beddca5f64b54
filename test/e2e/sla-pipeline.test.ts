/**
 * SLA state through the local pipeline: ticket and message writes -> outbox ->
 * bus -> `sla` queue -> state consumer; the per-minute breach check run on
 * demand; recompute through its queue.
 */
import { describe, expect, it } from 'vitest';
import { clockPast, eventually } from '../support/wait.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, outboxItems, TICKETS, type Desk } from '../support/desk.ts';
import { storedSlaState, type StoredSlaState } from '../support/store.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/sla-policies';
const { mine, pipeline } = usePipeline(['sla', 'sla-recompute']);

interface Desktop {
  acct: TestAccount;
  d: Desk;
  message(ticketId: string, type: 'request' | 'response' | 'note'): Promise<void>;
}

async function desk(): Promise<Desktop> {
  const acct = await createTestAccount();
  mine.add(acct.accountId);
  const session = await acct.session(acct.ownerId);
  return {
    acct,
    d: as(client, acct.ownerKey),
    async message(ticketId, type) {
      const res = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticketId, type, content: `<p>${type}</p>`, send_email: false } });
      expect(res.status, res.text).toBe(201);
    },
  };
}

const minutes = (n: number) => ({ urgent: n, high: n, normal: n, low: n });
async function policy(d: Desk, over: Record<string, unknown> = {}) {
  const res = await d.post(BASE, {
    name: 'VIP',
    timeMode: 'calendarHours',
    conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }],
    targets: { firstReply: minutes(60), nextReply: minutes(30), resolution: minutes(480) },
    ...over,
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

/**
 * A policy no ticket of these tests matches: an account keeps SLA states only
 * once it has had a policy (docs/decisions.md, "SLA state only where there
 * are policies"), so tickets get a state with no policy applied.
 */
const unmatchedPolicy = (d: Desk) => policy(d, { name: 'Other', conditions: [{ field: 'tags', operator: 'contains_any', value: ['no-ticket-has-this'] }] });

const state = async (d: Desk, ticketId: string) => (await d.get(`${BASE}/ticket/${ticketId}`)).body.data;

/** Wait until the consumer's stored state satisfies `ok`, then answer the API's view. */
async function settled(t: Desktop, ticketId: string, ok: (s: StoredSlaState) => boolean, what: string) {
  await eventually(
    async () => {
      const s = await storedSlaState(t.acct.accountId, ticketId);
      return s && ok(s);
    },
    15_000,
    what,
  );
  return state(t.d, ticketId);
}

describe('SLA state kept by the consumer', () => {
  it('a policy matching by tag gives a new ticket firstReply and resolution deadlines; a response achieves firstReply; request then response runs and achieves nextReply; resolved achieves resolution', async () => {
    const t = await desk();
    const p = await policy(t.d);
    const ticket = await newTicket(t.d, { tags: ['vip'] });
    const created = Date.parse(ticket.createdAt);

    let s = await settled(t, ticket.id, () => true, 'the state of the new ticket');
    expect(s).toMatchObject({ ticketId: ticket.id, policyId: p.id, policyName: 'VIP', timeMode: 'calendarHours', breached: false, paused: false });
    expect(s.metrics.firstReply).toEqual({ targetMinutes: 60, startedAt: ticket.createdAt, dueAt: new Date(created + 60 * 60_000).toISOString(), achievedAt: null, breached: false, pausedMinutes: 0 });
    expect(s.metrics.resolution).toMatchObject({ targetMinutes: 480, dueAt: new Date(created + 480 * 60_000).toISOString(), achievedAt: null });
    expect(s.metrics.nextReply).toBeNull();

    await t.message(ticket.id, 'note');
    await t.message(ticket.id, 'response');
    s = await settled(t, ticket.id, (x) => x.facts.firstReplyAt !== null, 'firstReply achieved');
    expect(s.metrics.firstReply).toMatchObject({ achievedAt: expect.any(String), breached: false });
    expect(s.metrics.nextReply).toBeNull();

    await t.message(ticket.id, 'request');
    s = await settled(t, ticket.id, (x) => x.facts.replies.length === 2, 'nextReply running');
    expect(s.metrics.nextReply).toMatchObject({ targetMinutes: 30, achievedAt: null, breached: false });
    const nextStarted = s.metrics.nextReply.startedAt;
    expect(s.metrics.nextReply.dueAt).toBe(new Date(Date.parse(nextStarted) + 30 * 60_000).toISOString());

    await t.message(ticket.id, 'response');
    s = await settled(t, ticket.id, (x) => x.facts.replies.length === 3, 'nextReply achieved');
    expect(s.metrics.nextReply).toMatchObject({ startedAt: nextStarted, achievedAt: expect.any(String), breached: false });

    expect((await t.d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'resolved' } })).status).toBe(200);
    s = await settled(t, ticket.id, (x) => x.facts.resolvedAt !== null, 'resolution achieved');
    expect(s.metrics.resolution).toMatchObject({ achievedAt: expect.any(String), breached: false });
    expect(s.breached).toBe(false);

    // A reopen starts resolution again, with its full target from the reopen.
    const reopened = await t.d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'open' } });
    s = await settled(t, ticket.id, (x) => x.facts.resolvedAt === null, 'resolution restarted');
    expect(s.metrics.resolution).toMatchObject({ startedAt: reopened.body.ticket.updatedAt, achievedAt: null, targetMinutes: 480 });
  });

  it('pending pauses the clock (no deadline while paused); back to open, the deadline moves by the time paused', async () => {
    const t = await desk();
    await policy(t.d);
    const ticket = await newTicket(t.d, { tags: ['vip'] });
    const before = await settled(t, ticket.id, () => true, 'the state');
    await t.d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'pending' } });
    let s = await settled(t, ticket.id, (x) => x.facts.status === 'pending', 'paused');
    expect(s.paused).toBe(true);
    expect(s.metrics.firstReply.dueAt).toBeNull();
    expect(s.metrics.resolution.dueAt).toBeNull();
    expect((await storedSlaState(t.acct.accountId, ticket.id))!.nextDueAt).toBeNull();

    // The pause this test measures: at least 300 ms (until this clock has passed its start plus 300 ms).
    await clockPast(new Date(Date.parse((await storedSlaState(t.acct.accountId, ticket.id))!.facts.pauses[0].from) + 300).toISOString());
    await t.d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'open' } });
    s = await settled(t, ticket.id, (x) => x.facts.status === 'open', 'running again');
    const p = s.metrics.firstReply;
    expect(s.paused).toBe(false);
    const shift = Date.parse(p.dueAt) - Date.parse(before.metrics.firstReply.dueAt);
    const pause = (await storedSlaState(t.acct.accountId, ticket.id))!.facts.pauses[0];
    expect(shift).toBe(Date.parse(pause.to!) - Date.parse(pause.from));
    expect(shift).toBeGreaterThanOrEqual(300);
  });

  it('a ticket no policy matches has policyId null and no metrics; a later change that matches picks the policy', async () => {
    const t = await desk();
    const p = await policy(t.d);
    const ticket = await newTicket(t.d, { tags: ['ordinary'] });
    let s = await settled(t, ticket.id, () => true, 'the state');
    expect(s).toMatchObject({ policyId: null, policyName: null, metrics: { firstReply: null, nextReply: null, resolution: null }, breached: false });
    await t.d.put(`${TICKETS}/${ticket.id}`, { ticket: { tags: ['vip'] } });
    s = await settled(t, ticket.id, (x) => x.policy !== null, 'the policy picked');
    expect(s.policyId).toBe(p.id);
  });

  it('a deleted ticket loses its state', async () => {
    const t = await desk();
    await unmatchedPolicy(t.d);
    const ticket = await newTicket(t.d);
    await settled(t, ticket.id, () => true, 'the state');
    expect((await t.d.del(`${TICKETS}/${ticket.id}`)).status).toBe(204);
    await eventually(async () => (await storedSlaState(t.acct.accountId, ticket.id)) === null, 15_000, 'the state removed');
  });
});

describe('order tolerance', () => {
  it('the real events of a ticket, delivered in reverse order and each twice, give the state that in-order delivery gives', async () => {
    // An account the pipeline does not publish for: its events are fed to the consumer by hand.
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const session = await acct.session(acct.ownerId);
    await policy(d);
    const ticket = await newTicket(d, { tags: ['vip'] });
    const say = async (type: string) =>
      (await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.id, type, content: `<p>${type}</p>`, send_email: false } })).body.data;
    const r1 = await say('response');
    const q1 = await say('request');
    const r2 = await say('response');
    await d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'pending' } });

    const items = (await outboxItems(acct.accountId)).sort((a, b) => (a.eventId < b.eventId ? -1 : 1));
    expect(items.map((i) => i.detailType)).toEqual(['ticket.created', 'message.created', 'message.created', 'message.created', 'ticket.updated']);
    const record = (i: any, n: number) => ({ messageId: `m${n}`, body: JSON.stringify({ id: `e${n}`, source: i.source, 'detail-type': i.detailType, time: i.createdAt, detail: i.detail }) });
    const { handler } = await import('#functions/sla-state/handler.ts');
    const reversed = [...items].reverse();
    const res = await handler({ Records: [...reversed, ...reversed].map(record) } as any);
    expect(res.batchItemFailures).toEqual([]);

    const s = await state(d, ticket.id);
    expect(s.paused).toBe(true);
    expect(s.metrics.firstReply).toMatchObject({ achievedAt: r1.createdAt, breached: false });
    expect(s.metrics.nextReply).toMatchObject({ startedAt: q1.createdAt, achievedAt: r2.createdAt, breached: false });
    expect(s.metrics.resolution).toMatchObject({ achievedAt: null, dueAt: null });
  });
});

describe('breaches', () => {
  it('a 1-minute target on a ticket left alone is breached at the next check; sla.breached goes through the outbox to the bus, once per episode', async () => {
    const t = await desk();
    const p = await policy(t.d, { name: 'Fast', targets: { firstReply: minutes(1), nextReply: minutes(1), resolution: minutes(600) } });
    const ticket = await newTicket(t.d, { tags: ['vip'] });
    await settled(t, ticket.id, (x) => x.nextDueAt !== null, 'the state in the due index');
    const due = Date.parse(ticket.createdAt) + 60_000;

    // Hold the publisher so the recorded event can be looked at before it leaves the outbox.
    await pipeline().stopPublisher();
    try {
      // The check a minute from now (its schedule event names the minute it stands for).
      await pipeline().runSchedule('sla-breach-check', { time: new Date(due + 30_000).toISOString() });
      const events = (await outboxItems(t.acct.accountId)).filter((i) => i.detailType === 'sla.breached');
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        source: 'support-desk.sla',
        detail: {
          accountId: t.acct.accountId,
          event: 'sla.breached',
          data: {
            ticket: { id: ticket.id },
            metric: 'firstReply',
            policy: { id: p.id, name: 'Fast' },
            timeMode: 'calendarHours',
            targetMinutes: 1,
            startedAt: ticket.createdAt,
            dueAt: new Date(due).toISOString(),
            achievedAt: null,
          },
        },
      });
      // The same episode is never reported again.
      await pipeline().runSchedule('sla-breach-check', { time: new Date(due + 90_000).toISOString() });
      expect((await outboxItems(t.acct.accountId)).filter((i) => i.detailType === 'sla.breached')).toHaveLength(1);
    } finally {
      await pipeline().startPublisher();
    }
    // The publisher deletes an outbox item only once the bus accepted it.
    await eventually(async () => !(await outboxItems(t.acct.accountId)).some((i) => i.detailType === 'sla.breached'), 15_000, 'sla.breached published');

    const s = await state(t.d, ticket.id);
    expect(s.breached).toBe(true);
    expect(s.metrics.firstReply).toMatchObject({ breached: true, achievedAt: null });
    const rec = await storedSlaState(t.acct.accountId, ticket.id);
    expect(rec!.breaches).toEqual({ firstReply: ticket.createdAt });
    // The index now watches the next deadline (resolution), not the reported one.
    expect(rec!.nextDueAt).toBe(s.metrics.resolution.dueAt);
  });
});

describe('recompute', () => {
  it('applies current policies to open tickets in the background; resolved tickets are left alone', async () => {
    const t = await desk();
    await unmatchedPolicy(t.d);
    const open = await Promise.all([newTicket(t.d, { tags: ['vip'] }), newTicket(t.d, { tags: ['vip'], status: 'pending' })]);
    const resolved = await newTicket(t.d, { tags: ['vip'], status: 'resolved' });
    for (const tk of [...open, resolved]) await settled(t, tk.id, () => true, 'the state');
    const p = await policy(t.d);
    // A policy change does not touch existing tickets by itself.
    expect((await storedSlaState(t.acct.accountId, open[0].id))!.policy).toBeNull();

    const res = await t.d.post(`${BASE}/recompute`, {});
    expect(res.status).toBe(202);
    expect(res.body.data).toEqual({ accepted: true, ticketCount: 2 });
    for (const tk of open) await settled(t, tk.id, (x) => x.policy?.id === p.id, 'recomputed');
    expect((await storedSlaState(t.acct.accountId, resolved.id))!.policy).toBeNull();
  });

  it('a recompute message that fails is reported on its own; the rest of its batch is recomputed', async () => {
    const t = await desk();
    await unmatchedPolicy(t.d);
    const ticket = await newTicket(t.d, { tags: ['vip'] });
    await settled(t, ticket.id, () => true, 'the state');
    const p = await policy(t.d);
    const consumer = (await localLambda()).byEntry('functions/sla-recompute/handler.ts');

    // Act: the deployed consumer gets a body that will never parse beside a good page.
    const res = await consumer.invoke<{ batchItemFailures: unknown[] }>({
      Records: [
        { messageId: 'bad', body: 'not json' },
        { messageId: 'good', body: JSON.stringify({ accountId: t.acct.accountId }) },
      ],
    });

    // Assert
    expect(res.batchItemFailures).toEqual([{ itemIdentifier: 'bad' }]);
    expect((await storedSlaState(t.acct.accountId, ticket.id))!.policy?.id).toBe(p.id);
  });
});
