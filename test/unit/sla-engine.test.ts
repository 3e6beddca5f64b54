import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEDULE, type Clock } from '#shared/sla/clock.ts';
import { applyMessage, applyPolicy, applyTicket, computeMetrics, conditionHolds, deadline, newBreaches, nextDue, pickPolicy, type AppliedPolicy, type TicketView } from '#shared/sla/engine.ts';
import type { SlaPolicy, SlaSampleTicket } from '#shared/sla/model.ts';

const calendar: Clock = { mode: 'calendarHours' };
const business: Clock = { mode: 'businessHours', schedule: DEFAULT_SCHEDULE };
const T0 = '2026-11-23T10:00:00.000Z'; // Monday
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const ms = (minutes: number) => Date.parse(at(minutes));

const ticket = (over: Partial<TicketView> = {}): TicketView => ({
  status: 'new',
  priority: 'normal',
  type: 'question',
  tags: [],
  assigneeId: null,
  requesterEmail: null,
  customFields: [],
  createdAt: T0,
  updatedAt: T0,
  version: 1,
  ...over,
});
const policy: AppliedPolicy = { id: 'sla_1', name: 'Default', timeMode: 'calendarHours', targets: { firstReply: 60, nextReply: 30, resolution: 240 } };
const start = () => applyTicket(null, ticket()).facts;
const msg = (type: string, minute: number) => ({ id: `msg_${String(minute).padStart(4, '0')}_${type}`, type, createdAt: at(minute) });

describe('deadline: the clock walks forward around pauses', () => {
  const cases = [
    { name: 'no pause', pauses: [], due: ms(60) },
    { name: 'a pause inside the target pushes the deadline by its length', pauses: [{ from: ms(10), to: ms(30) }], due: ms(80) },
    { name: 'a pause after the deadline changes nothing', pauses: [{ from: ms(70), to: ms(90) }], due: ms(60) },
    { name: 'a pause begun before the start counts from its end', pauses: [{ from: ms(-30), to: ms(15) }], due: ms(75) },
    { name: 'an open pause: no deadline while paused', pauses: [{ from: ms(10), to: null }], due: null },
    {
      name: 'two pauses',
      pauses: [
        { from: ms(10), to: ms(20) },
        { from: ms(40), to: ms(45) },
      ],
      due: ms(75),
    },
  ];
  it.each(cases)('$name', ({ pauses, due }) => expect(deadline(calendar, ms(0), 60, pauses)).toBe(due));

  it('business hours: a pause across a night counts only open minutes', () => {
    // 15:00-16:00 runs (60), paused until Tuesday 10:00, then 120 more.
    const due = deadline(business, Date.parse('2026-11-23T15:00:00.000Z'), 180, [{ from: Date.parse('2026-11-23T16:00:00.000Z'), to: Date.parse('2026-11-24T10:00:00.000Z') }]);
    expect(new Date(due!).toISOString()).toBe('2026-11-24T12:00:00.000Z');
  });
});

describe('metrics from facts', () => {
  it('a new ticket runs firstReply and resolution from creation; nextReply is not running', () => {
    const m = computeMetrics(start(), policy, calendar, {}, ms(5));
    expect(m.firstReply).toEqual({ targetMinutes: 60, startedAt: T0, dueAt: at(60), achievedAt: null, breached: false, pausedMinutes: 0 });
    expect(m.resolution).toMatchObject({ dueAt: at(240), achievedAt: null });
    expect(m.nextReply).toBeNull();
  });

  it('no policy: every metric is null', () => {
    expect(computeMetrics(start(), null, calendar, {}, ms(5))).toEqual({ firstReply: null, nextReply: null, resolution: null });
  });

  it('a response achieves firstReply; a request after it starts nextReply; the next response achieves it', () => {
    let f = applyMessage(start(), msg('response', 20));
    f = applyMessage(f, msg('request', 40));
    let m = computeMetrics(f, policy, calendar, {}, ms(45));
    expect(m.firstReply).toMatchObject({ achievedAt: at(20), breached: false });
    expect(m.nextReply).toMatchObject({ startedAt: at(40), dueAt: at(70), achievedAt: null });
    f = applyMessage(f, msg('response', 50));
    m = computeMetrics(f, policy, calendar, {}, ms(55));
    expect(m.nextReply).toMatchObject({ startedAt: at(40), achievedAt: at(50), breached: false });
  });

  it('nextReply runs from the oldest unanswered request', () => {
    let f = applyMessage(start(), msg('response', 1));
    f = applyMessage(f, msg('request', 5));
    f = applyMessage(f, msg('request', 9));
    expect(computeMetrics(f, policy, calendar, {}, ms(10)).nextReply).toMatchObject({ startedAt: at(5) });
  });

  it('notes never count as replies, and requests before any response leave nextReply alone', () => {
    let f = applyMessage(start(), msg('note', 5));
    f = applyMessage(f, msg('request', 6));
    const m = computeMetrics(f, policy, calendar, {}, ms(10));
    expect(m.firstReply!.achievedAt).toBeNull();
    expect(m.nextReply).toBeNull();
  });

  it('messages applied twice or out of order give the same facts', () => {
    const msgs = [msg('response', 10), msg('request', 20), msg('response', 30), msg('request', 40)];
    const inOrder = msgs.reduce(applyMessage, start());
    const twice = [...msgs, ...msgs].reduce(applyMessage, start());
    expect(twice).toEqual(inOrder);
    expect(computeMetrics(inOrder, policy, calendar, {}, ms(45)).nextReply).toMatchObject({ startedAt: at(40), achievedAt: null });
    // Reversed, and shuffled with repeats: the same facts.
    expect([...msgs].reverse().reduce(applyMessage, start())).toEqual(inOrder);
    expect([msgs[2], msgs[0], msgs[3], msgs[2], msgs[1], msgs[0]].reduce(applyMessage, start())).toEqual(inOrder);
    // A request that arrives after the response that answered it still makes that episode.
    const late = [msgs[0], msgs[2], msgs[1]].reduce(applyMessage, start());
    expect(computeMetrics(late, policy, calendar, {}, ms(35)).nextReply).toMatchObject({ startedAt: at(20), achievedAt: at(30) });
    expect(late.firstReplyAt).toBe(at(10));
  });

  it('a request on a resolved ticket starts nothing; after a reopen it does', () => {
    let f = applyMessage(start(), msg('response', 1));
    f = applyTicket(f, ticket({ status: 'resolved', updatedAt: at(5), version: 2 })).facts;
    f = applyMessage(f, msg('request', 6));
    expect(computeMetrics(f, policy, calendar, {}, ms(7)).nextReply).toBeNull();
    f = applyTicket(f, ticket({ status: 'open', updatedAt: at(8), version: 3 })).facts;
    f = applyMessage(f, msg('request', 9));
    expect(computeMetrics(f, policy, calendar, {}, ms(10)).nextReply).toMatchObject({ startedAt: at(9), achievedAt: null });
  });

  it('pending pauses the clock; minutes paused are recorded per metric and the deadline moves', () => {
    let f = applyTicket(start(), ticket({ status: 'pending', updatedAt: at(10), version: 2 })).facts;
    let m = computeMetrics(f, policy, calendar, {}, ms(25));
    expect(m.firstReply).toMatchObject({ dueAt: null, pausedMinutes: 15, breached: false });
    f = applyTicket(f, ticket({ status: 'open', updatedAt: at(40), version: 3 })).facts;
    m = computeMetrics(f, policy, calendar, {}, ms(45));
    expect(m.firstReply).toMatchObject({ dueAt: at(90), pausedMinutes: 30 });
    expect(m.resolution).toMatchObject({ dueAt: at(270), pausedMinutes: 30 });
  });

  it('resolved achieves resolution and fulfils a reply still owed; a reopen starts resolution again with its full target', () => {
    let f = applyTicket(start(), ticket({ status: 'resolved', updatedAt: at(100), version: 2 })).facts;
    let m = computeMetrics(f, policy, calendar, {}, ms(110));
    expect(m.resolution).toMatchObject({ achievedAt: at(100), breached: false });
    expect(m.firstReply).toMatchObject({ achievedAt: at(100), breached: true }); // 100 > 60
    f = applyTicket(f, ticket({ status: 'open', updatedAt: at(200), version: 3 })).facts;
    m = computeMetrics(f, policy, calendar, {}, ms(210));
    expect(m.resolution).toEqual({ targetMinutes: 240, startedAt: at(200), dueAt: at(440), achievedAt: null, breached: false, pausedMinutes: 0 });
  });

  it('a ticket event not newer than the facts changes nothing', () => {
    const f = applyTicket(start(), ticket({ status: 'pending', updatedAt: at(10), version: 3 })).facts;
    const stale = applyTicket(f, ticket({ status: 'open', updatedAt: at(5), version: 2 }));
    expect(stale.changed).toBe(false);
    expect(stale.facts).toBe(f);
  });

  it('a breach is reported once per metric episode, and a new episode can breach again', () => {
    let f = applyMessage(start(), msg('response', 1));
    f = applyMessage(f, msg('request', 2));
    let m = computeMetrics(f, policy, calendar, {}, ms(40));
    expect(newBreaches(m, {})).toEqual(['nextReply']);
    const breaches = { nextReply: at(2) };
    expect(newBreaches(computeMetrics(f, policy, calendar, breaches, ms(50)), breaches)).toEqual([]);
    f = applyMessage(f, msg('response', 45));
    f = applyMessage(f, msg('request', 46));
    m = computeMetrics(f, policy, calendar, breaches, ms(77));
    expect(newBreaches(m, breaches)).toEqual(['nextReply']);
  });

  it('nextDue is the earliest running deadline not yet reported', () => {
    const m = computeMetrics(start(), policy, calendar, {}, ms(1));
    expect(nextDue(m, {})).toBe(at(60));
    expect(nextDue(m, { firstReply: T0 })).toBe(at(240));
  });
});

describe('policy matching', () => {
  const sample = (over: Partial<SlaSampleTicket> = {}): SlaSampleTicket => ({
    priority: 'high',
    type: 'incident',
    status: 'open',
    tags: ['VIP', 'billing'],
    assigneeId: null,
    requesterEmail: 'ann@Acme.com',
    customFields: [{ id: 'fld_1', value: ['gold', 'red'] }],
    ...over,
  });
  const cases: { name: string; field: string; operator: any; value?: any; holds: boolean }[] = [
    { name: 'priority is', field: 'priority', operator: 'is', value: 'high', holds: true },
    { name: 'priority is_not', field: 'priority', operator: 'is_not', value: 'high', holds: false },
    { name: 'type is', field: 'type', operator: 'is', value: 'incident', holds: true },
    { name: 'status is_not', field: 'status', operator: 'is_not', value: 'pending', holds: true },
    { name: 'tags contains_any (case-insensitive)', field: 'tags', operator: 'contains_any', value: ['vip', 'other'], holds: true },
    { name: 'tags contains_any, none', field: 'tags', operator: 'contains_any', value: ['other'], holds: false },
    { name: 'assignee_id is_not_set', field: 'assignee_id', operator: 'is_not_set', holds: true },
    { name: 'assignee_id is_set', field: 'assignee_id', operator: 'is_set', holds: false },
    { name: 'requester_domain is', field: 'requester_domain', operator: 'is', value: 'acme.com', holds: true },
    { name: 'customField contains_any on a list value', field: 'customField:fld_1', operator: 'contains_any', value: ['red'], holds: true },
    { name: 'customField is on a list value', field: 'customField:fld_1', operator: 'is', value: 'gold', holds: true },
    { name: 'customField is_set on a missing field', field: 'customField:fld_2', operator: 'is_set', holds: false },
  ];
  it.each(cases)('$name', ({ field, operator, value, holds }) => expect(conditionHolds(sample(), { field, operator, value })).toBe(holds));

  const p = (id: string, position: number, over: Partial<SlaPolicy> = {}): SlaPolicy => ({
    id,
    name: id,
    description: null,
    isActive: true,
    timeMode: 'calendarHours',
    conditions: [],
    targets: { firstReply: { urgent: 1, high: 2, normal: 3, low: 4 }, nextReply: { urgent: 5, high: 6, normal: 7, low: 8 }, resolution: { urgent: 9, high: 10, normal: 11, low: 12 } },
    position,
    createdAt: T0,
    updatedAt: T0,
    ...over,
  });

  it('the first active policy by position whose conditions all hold applies, with the targets of the priority', () => {
    const policies = [
      p('c', 2),
      p('a', 0, { isActive: false }),
      p('b', 1, {
        conditions: [
          { field: 'tags', operator: 'contains_any', value: ['vip'] },
          { field: 'priority', operator: 'is', value: 'low' },
        ],
      }),
    ];
    const picked = pickPolicy(policies, sample());
    expect(picked?.id).toBe('c');
    expect(applyPolicy(picked, 'high')).toEqual({ id: 'c', name: 'c', timeMode: 'calendarHours', targets: { firstReply: 2, nextReply: 6, resolution: 10 } });
    expect(pickPolicy([p('x', 0, { conditions: [{ field: 'priority', operator: 'is', value: 'low' }] })], sample())).toBeNull();
  });
});
