import { describe, expect, it } from 'vitest';
import type { Clock } from '#shared/sla/clock.ts';
import { applyTicket, settle, type AppliedPolicy, type KeptState, type TicketView } from '#shared/sla/engine.ts';

const clock: Clock = { mode: 'calendarHours' };
const T0 = '2026-11-23T10:00:00.000Z';
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * 60_000).toISOString();
const ms = (minutes: number) => Date.parse(at(minutes));

const ticket: TicketView = {
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
};
const facts = applyTicket(null, ticket).facts;
const policy: AppliedPolicy = { id: 'sla_1', name: 'Default', timeMode: 'calendarHours', targets: { firstReply: 60, nextReply: 30, resolution: 240 } };
const kept = (over: Partial<KeptState> = {}): KeptState => ({ facts, policy, breaches: {}, nextDueAt: at(60), ...over });
/** The same state as DynamoDB may hand it back: map keys in another order. */
const reordered = (s: KeptState): KeptState => JSON.parse(JSON.stringify(s, (_k, v) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v)));

const cases: {
  name: string;
  current: KeptState | null;
  policy?: AppliedPolicy | null;
  now: number;
  write: boolean;
  breached: string[];
  nextDueAt: string | null;
  breaches?: KeptState['breaches'];
}[] = [
  { name: 'a first state without a policy is written, with nothing to watch', current: null, policy: null, now: ms(10), write: true, breached: [], nextDueAt: null },
  { name: 'a first state with a policy watches the earliest deadline', current: null, now: ms(10), write: true, breached: [], nextDueAt: at(60) },
  { name: 'the same state again is not written (a redelivered event)', current: kept(), now: ms(20), write: false, breached: [], nextDueAt: at(60) },
  { name: 'key order as the store returns it does not count as a change', current: reordered(kept()), now: ms(20), write: false, breached: [], nextDueAt: at(60) },
  {
    name: 'a deadline passed is marked and announced once, and the next deadline is watched',
    current: kept(),
    now: ms(61),
    write: true,
    breached: ['firstReply'],
    nextDueAt: at(240),
    breaches: { firstReply: T0 },
  },
  {
    name: 'a breach already reported is not announced again',
    current: kept({ breaches: { firstReply: T0 }, nextDueAt: at(240) }),
    now: ms(90),
    write: false,
    breached: [],
    nextDueAt: at(240),
    breaches: { firstReply: T0 },
  },
  {
    name: 'two deadlines passed at once are both announced; nothing is left to watch',
    current: kept(),
    now: ms(241),
    write: true,
    breached: ['firstReply', 'resolution'],
    nextDueAt: null,
    breaches: { firstReply: T0, resolution: T0 },
  },
  {
    name: 'other targets are a change even before any deadline moves',
    current: kept(),
    policy: { ...policy, name: 'Renamed' },
    now: ms(20),
    write: true,
    breached: [],
    nextDueAt: at(60),
  },
  { name: 'a policy dropped stops the watch', current: kept(), policy: null, now: ms(20), write: true, breached: [], nextDueAt: null },
];

describe('settle: what a ticket SLA state becomes at a time (decisions §10)', () => {
  it.each(cases)('$name', (c) => {
    // Act
    const { next, breached, write } = settle(c.current, facts, c.policy === undefined ? policy : c.policy, clock, c.now);

    // Assess
    expect(write).toBe(c.write);
    expect(breached.map((b) => b.metric)).toEqual(c.breached);
    expect(next.nextDueAt).toBe(c.nextDueAt);
    expect(next.breaches).toEqual(c.breaches ?? {});
  });

  it('hands each new breach its metric state, for the sla.breached event', () => {
    // Act
    const { breached } = settle(kept(), facts, policy, clock, ms(61));

    // Assess
    expect(breached).toEqual([{ metric: 'firstReply', state: expect.objectContaining({ targetMinutes: 60, startedAt: T0, dueAt: at(60), achievedAt: null, breached: true }) }]);
  });

  it('leaves the state it was given as it was', () => {
    // Arrange
    const current = kept();
    const before = structuredClone(current);

    // Act
    settle(current, facts, policy, clock, ms(61));

    // Assess
    expect(current).toEqual(before);
  });
});
