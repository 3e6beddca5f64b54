/**
 * The SLA engine (decisions §10), pure: no I/O. A ticket's SLA state is kept
 * as *facts* (when it was created and first answered, the requests, responses
 * and resolves in time order, when resolution started and ended, when it was
 * pending); the metrics are a function of those facts, the applied policy's
 * targets, the clock and the time. Facts change only by idempotent,
 * order-independent steps (a set of reply events keyed by id and sorted by
 * time, the earliest first reply, a ticket version guard), so a redelivered or
 * reordered event gives the same state, and a policy change or a recompute
 * only swaps the targets.
 */
import type { TicketPriority, TicketStatus } from '../ticket-fields/system-values.ts';
import { addClockMinutes, clockMinutesBetween, type Clock } from './clock.ts';
import { CUSTOM_FIELD_PREFIX, SLA_METRICS, type SlaMetric, type TimeMode } from './limits.ts';
import type { SlaCondition, SlaMetricState, SlaPolicy, SlaSampleTicket } from './model.ts';

/** At most this many pending periods are kept per ticket (the oldest go first). */
export const MAX_PAUSES = 50;
/** At most this many reply events are kept per ticket (the oldest are folded into `replyBase`). */
export const MAX_REPLY_EVENTS = 50;

/** What moves the reply metrics: requests and responses (by message id), resolves and reopens (by ticket version). */
export interface ReplyEvent {
  id: string;
  type: 'request' | 'response' | 'resolved' | 'reopened';
  at: string;
}

export interface Pause {
  from: string;
  /** Null while the ticket is still pending. */
  to: string | null;
}

export interface SlaFacts {
  ticketCreatedAt: string;
  status: TicketStatus;
  priority: TicketPriority;
  /** The ticket version these facts reflect; older ticket events are ignored. */
  ticketVersion: number;
  /** First response, or the first resolve if that came before any response. */
  firstReplyAt: string | null;
  /** Reply events in time order (id breaks ties), each once. */
  replies: ReplyEvent[];
  /** Where the reply scan starts: what the events folded out of the window left behind. */
  replyBase: { responded: boolean; done: boolean };
  /** Creation, or the last reopen. */
  resolutionStartAt: string;
  resolvedAt: string | null;
  pauses: Pause[];
}

/** The policy as applied to one ticket: a snapshot, so editing the policy changes nothing until recompute or the ticket's next change. */
export interface AppliedPolicy {
  id: string;
  name: string;
  timeMode: TimeMode;
  targets: Record<SlaMetric, number>;
}

/** Metric episodes already reported breached: metric -> startedAt of that episode. */
export type Breaches = Partial<Record<SlaMetric, string>>;

/** The ticket fields the engine reads. */
export interface TicketView {
  status: TicketStatus;
  priority: TicketPriority;
  type: string;
  tags: string[];
  assigneeId: string | null;
  requesterEmail: string | null;
  customFields: { id: string; value: unknown }[];
  createdAt: string;
  updatedAt: string;
  version: number;
}

const DONE: readonly TicketStatus[] = ['resolved', 'closed'];
const minIso = (a: string | null, b: string) => (a === null || b < a ? b : a);

/**
 * Bring facts up to a ticket version (or create them). A version not newer
 * than the facts' is a stale or repeated event: nothing changes. Status moves
 * take effect at the ticket's updatedAt: entering `pending` opens a pause,
 * leaving it closes the pause; `resolved`/`closed` ends resolution and
 * fulfils running reply metrics; leaving them reopens: resolution starts again
 * with its full target from the reopen.
 */
export function applyTicket(facts: SlaFacts | null, t: TicketView): { facts: SlaFacts; changed: boolean } {
  if (facts && t.version <= facts.ticketVersion) return { facts, changed: false };
  const f: SlaFacts = facts
    ? { ...facts, pauses: [...facts.pauses] }
    : {
        ticketCreatedAt: t.createdAt,
        status: 'new',
        priority: t.priority,
        ticketVersion: 0,
        firstReplyAt: null,
        replies: [],
        replyBase: { responded: false, done: false },
        resolutionStartAt: t.createdAt,
        resolvedAt: null,
        pauses: [],
      };
  const at = t.updatedAt;
  const was = f.status;
  const now = t.status;
  if (was === 'pending' && now !== 'pending') f.pauses = f.pauses.map((p) => (p.to === null ? { ...p, to: at } : p));
  if (now === 'pending' && was !== 'pending') f.pauses = [...f.pauses, { from: at, to: null }].slice(-MAX_PAUSES);
  let next: SlaFacts = f;
  if (DONE.includes(now) && !DONE.includes(was)) {
    next = withReply({ ...f, resolvedAt: at, firstReplyAt: minIso(f.firstReplyAt, at) }, { id: `v${t.version}`, type: 'resolved', at });
  }
  if (!DONE.includes(now) && DONE.includes(was)) {
    next = withReply({ ...f, resolutionStartAt: at, resolvedAt: null }, { id: `v${t.version}`, type: 'reopened', at });
  }
  return { facts: { ...next, status: now, priority: t.priority, ticketVersion: t.version }, changed: true };
}

const byTime = (a: ReplyEvent, b: ReplyEvent) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Add a reply event once, in time order; beyond the window the oldest are folded into the scan's starting point. */
function withReply(f: SlaFacts, e: ReplyEvent): SlaFacts {
  if (f.replies.some((r) => r.id === e.id)) return f;
  const replies = [...f.replies, e].sort(byTime);
  let replyBase = f.replyBase;
  while (replies.length > MAX_REPLY_EVENTS) {
    const old = replies.shift()!;
    replyBase = { responded: replyBase.responded || old.type === 'response', done: old.type === 'resolved' ? true : old.type === 'reopened' ? false : replyBase.done };
  }
  return { ...f, replies, replyBase };
}

/**
 * nextReply from the reply events in time order: a request after a response
 * (while the ticket is not resolved) starts an episode, unless one is already
 * waiting; the next response, or a resolve, ends it.
 */
function nextReplyEpisode(f: SlaFacts): { start: string; end: string | null } | null {
  let { responded, done } = f.replyBase;
  let waiting: string | null = null;
  let last: { start: string; end: string } | null = null;
  for (const e of f.replies) {
    if ((e.type === 'response' || e.type === 'resolved') && waiting) {
      last = { start: waiting, end: e.at };
      waiting = null;
    }
    if (e.type === 'response') responded = true;
    if (e.type === 'resolved') done = true;
    if (e.type === 'reopened') done = false;
    if (e.type === 'request' && responded && !done && !waiting) waiting = e.at;
  }
  return waiting ? { start: waiting, end: null } : last;
}

/**
 * Apply a message: requests and responses join the reply events (each once,
 * in time order, whatever order they arrive in); the earliest response is the
 * first reply. Notes never count.
 */
export function applyMessage(f: SlaFacts, m: { id: string; type: string; createdAt: string }): SlaFacts {
  if (m.type !== 'request' && m.type !== 'response') return f;
  const next = withReply(f, { id: m.id, type: m.type, at: m.createdAt });
  return m.type === 'response' ? { ...next, firstReplyAt: minIso(next.firstReplyAt, m.createdAt) } : next;
}

/** The episode of each metric: when it started and when (if) it ended. */
function episodes(f: SlaFacts): Record<SlaMetric, { start: string; end: string | null } | null> {
  return {
    firstReply: { start: f.ticketCreatedAt, end: f.firstReplyAt },
    nextReply: nextReplyEpisode(f),
    resolution: { start: f.resolutionStartAt, end: f.resolvedAt },
  };
}

const ms = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();

/**
 * When `target` clock minutes have run from `start`, skipping pauses: the
 * clock walks forward from where it last ran. Null while paused (the deadline
 * is unknown until the clock runs again) or when the schedule never reaches it.
 */
export function deadline(clock: Clock, start: number, target: number, pauses: { from: number; to: number | null }[]): number | null {
  let cursor = start;
  let remaining = target;
  for (const p of pauses) {
    if (p.to !== null && p.to <= cursor) continue;
    if (p.from > cursor) {
      const due = addClockMinutes(clock, cursor, remaining);
      if (due === null || due <= p.from) return due;
      remaining -= clockMinutesBetween(clock, cursor, p.from);
    }
    if (p.to === null) return null;
    cursor = Math.max(cursor, p.to);
  }
  return addClockMinutes(clock, cursor, remaining);
}

/** One metric's state at `now`. */
export function metricState(clock: Clock, target: number, start: string, end: string | null, pauses: Pause[], breachedEpisode: boolean, now: number): SlaMetricState {
  const s = ms(start);
  const stop = end ? ms(end) : now;
  // Only the pauses inside the episode count; a pause still open when the metric ended ends with it.
  const inside = pauses
    .map((p) => ({ from: ms(p.from), to: p.to === null ? (end ? stop : null) : Math.min(ms(p.to), stop) }))
    .filter((p) => p.from < stop && (p.to === null || p.to > s))
    .sort((a, b) => a.from - b.from);
  const due = deadline(clock, s, target, inside);
  const paused = inside.reduce((sum, p) => sum + clockMinutesBetween(clock, Math.max(p.from, s), p.to ?? now), 0);
  const late = due !== null && (end ? stop > due : now >= due);
  return { targetMinutes: target, startedAt: start, dueAt: due === null ? null : iso(due), achievedAt: end, breached: breachedEpisode || late, pausedMinutes: Math.floor(paused + 1e-9) };
}

export type Metrics = Record<SlaMetric, SlaMetricState | null>;

/** Every metric's state at `now` (all null without a policy). */
export function computeMetrics(f: SlaFacts, policy: AppliedPolicy | null, clock: Clock, breaches: Breaches, now: number): Metrics {
  const eps = episodes(f);
  const out = { firstReply: null, nextReply: null, resolution: null } as Metrics;
  if (!policy) return out;
  for (const m of SLA_METRICS) {
    const ep = eps[m];
    if (ep) out[m] = metricState(clock, policy.targets[m], ep.start, ep.end, f.pauses, breaches[m] === ep.start, now);
  }
  return out;
}

/** Metrics that are late now but not yet reported for their episode (each is reported exactly once). */
export function newBreaches(metrics: Metrics, breaches: Breaches): SlaMetric[] {
  return SLA_METRICS.filter((m) => {
    const s = metrics[m];
    return s?.breached && breaches[m] !== s.startedAt;
  });
}

/** The earliest deadline still to watch (running, not reported breached): the due index's sort key. */
export function nextDue(metrics: Metrics, breaches: Breaches): string | null {
  const dues = SLA_METRICS.flatMap((m) => {
    const s = metrics[m];
    return s && !s.achievedAt && s.dueAt !== null && breaches[m] !== s.startedAt ? [s.dueAt] : [];
  });
  return dues.length ? dues.sort()[0] : null;
}

/** What a ticket's SLA state keeps between events (the stored state without its keys, version and stamp). */
export interface KeptState {
  facts: SlaFacts;
  policy: AppliedPolicy | null;
  breaches: Breaches;
  nextDueAt: string | null;
}

/** JSON with object keys sorted: DynamoDB does not keep a map's key order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

/**
 * What a ticket's SLA state becomes at `now` with these facts and policy: the
 * metrics late and not yet reported are marked (each episode once) and
 * returned to be announced (sla.breached), and the next deadline to watch is
 * set. `write` is false when nothing changed that a reader or the breach check
 * sees (a redelivered event, a check that found nothing new).
 */
export function settle(
  current: KeptState | null,
  facts: SlaFacts,
  policy: AppliedPolicy | null,
  clock: Clock,
  now: number,
): { next: KeptState; breached: { metric: SlaMetric; state: SlaMetricState }[]; write: boolean } {
  const breaches = { ...(current?.breaches ?? {}) };
  const metrics = computeMetrics(facts, policy, clock, breaches, now);
  const breached = newBreaches(metrics, breaches).map((metric) => ({ metric, state: metrics[metric]! }));
  for (const b of breached) breaches[b.metric] = b.state.startedAt;
  const next: KeptState = { facts, policy, breaches, nextDueAt: nextDue(metrics, breaches) };
  const write = !current || breached.length > 0 || canonical([current.facts, current.policy, current.nextDueAt]) !== canonical([next.facts, next.policy, next.nextDueAt]);
  return { next, breached, write };
}

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
const same = (a: unknown, b: unknown) => lower(a) === lower(b);
const isSet = (v: unknown) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);
const domainOf = (email: string | null) => (email?.includes('@') ? email.slice(email.lastIndexOf('@') + 1).toLowerCase() : null);

/** The ticket value a condition looks at. */
function fieldValue(t: SlaSampleTicket, field: string): unknown {
  if (field.startsWith(CUSTOM_FIELD_PREFIX)) return t.customFields.find((c) => c.id === field.slice(CUSTOM_FIELD_PREFIX.length))?.value ?? null;
  switch (field) {
    case 'assignee_id':
      return t.assigneeId;
    case 'requester_domain':
      return domainOf(t.requesterEmail);
    default:
      return (t as Record<string, unknown>)[field];
  }
}

/** Does one condition hold for the ticket? Strings compare case-insensitively; a list value matches if any element does. */
export function conditionHolds(t: SlaSampleTicket, c: SlaCondition): boolean {
  const v = fieldValue(t, c.field);
  const values = Array.isArray(v) ? v : [v];
  switch (c.operator) {
    case 'is':
      return values.some((x) => same(x, c.value));
    case 'is_not':
      return !values.some((x) => same(x, c.value));
    case 'is_set':
      return isSet(v);
    case 'is_not_set':
      return !isSet(v);
    case 'contains_any':
      return Array.isArray(c.value) && values.some((x) => (c.value as unknown[]).some((w) => same(x, w)));
  }
}

/** decisions §10: the first active policy by position whose conditions all hold. */
export function pickPolicy(policies: SlaPolicy[], t: SlaSampleTicket): SlaPolicy | null {
  const ordered = [...policies].sort((a, b) => a.position - b.position || (a.id < b.id ? -1 : 1));
  return ordered.find((p) => p.isActive && p.conditions.every((c) => conditionHolds(t, c))) ?? null;
}

/** The policy's targets for one priority, as the state keeps them. */
export const applyPolicy = (p: SlaPolicy | null, priority: TicketPriority): AppliedPolicy | null =>
  p === null
    ? null
    : { id: p.id, name: p.name, timeMode: p.timeMode, targets: { firstReply: p.targets.firstReply[priority], nextReply: p.targets.nextReply[priority], resolution: p.targets.resolution[priority] } };
