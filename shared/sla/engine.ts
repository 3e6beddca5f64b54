/**
 * The SLA engine (decisions §10), pure: no I/O. A ticket's SLA state is kept
 * as *facts* (when it was created, first answered, last answered, which
 * request waits for an answer, when resolution started and ended, when it was
 * pending); the metrics are a function of those facts, the applied policy's
 * targets, the clock and the time. Facts change only by monotonic, idempotent
 * steps (earliest first response, latest response, ticket version guard), so
 * a redelivered or reordered event cannot move the state backwards, and a
 * policy change or a recompute only swaps the targets.
 */
import type { TicketPriority, TicketStatus } from '../tickets/model.ts';
import { addClockMinutes, clockMinutesBetween, type Clock } from './clock.ts';
import { CUSTOM_FIELD_PREFIX, SLA_METRICS, type SlaCondition, type SlaMetric, type SlaMetricState, type SlaPolicy, type SlaSampleTicket, type TimeMode } from './model.ts';

/** At most this many pending periods are kept per ticket (the oldest go first). */
export const MAX_PAUSES = 50;

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
  lastResponseAt: string | null;
  /** The oldest request after the last response, still unanswered. */
  nextReplyStartAt: string | null;
  /** The last answered nextReply episode. */
  lastNextReply: { startedAt: string; achievedAt: string } | null;
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
const maxIso = (a: string | null, b: string) => (a === null || b > a ? b : a);

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
    : { ticketCreatedAt: t.createdAt, status: 'new', priority: t.priority, ticketVersion: 0, firstReplyAt: null, lastResponseAt: null, nextReplyStartAt: null, lastNextReply: null, resolutionStartAt: t.createdAt, resolvedAt: null, pauses: [] };
  const at = t.updatedAt;
  const was = f.status;
  const now = t.status;
  if (was === 'pending' && now !== 'pending') f.pauses = f.pauses.map((p) => (p.to === null ? { ...p, to: at } : p));
  if (now === 'pending' && was !== 'pending') f.pauses = [...f.pauses, { from: at, to: null }].slice(-MAX_PAUSES);
  if (DONE.includes(now) && !DONE.includes(was)) {
    f.resolvedAt = at;
    f.firstReplyAt = minIso(f.firstReplyAt, at);
    if (f.nextReplyStartAt) f.lastNextReply = { startedAt: f.nextReplyStartAt, achievedAt: at };
    f.nextReplyStartAt = null;
  }
  if (!DONE.includes(now) && DONE.includes(was)) {
    f.resolutionStartAt = at;
    f.resolvedAt = null;
  }
  return { facts: { ...f, status: now, priority: t.priority, ticketVersion: t.version }, changed: true };
}

/**
 * Apply a message: a response answers the first reply (the earliest response
 * wins) and any waiting request; a request after the last response starts
 * nextReply (the oldest such request wins). Notes never count. Applying the
 * same message twice, or messages out of order, gives the same facts.
 */
export function applyMessage(f: SlaFacts, m: { type: string; createdAt: string }): SlaFacts {
  if (m.type === 'response') {
    const next = { ...f, firstReplyAt: minIso(f.firstReplyAt, m.createdAt), lastResponseAt: maxIso(f.lastResponseAt, m.createdAt) };
    if (f.nextReplyStartAt && f.nextReplyStartAt <= m.createdAt) {
      next.lastNextReply = { startedAt: f.nextReplyStartAt, achievedAt: m.createdAt };
      next.nextReplyStartAt = null;
    }
    return next;
  }
  if (m.type === 'request' && f.lastResponseAt && m.createdAt > f.lastResponseAt && !DONE.includes(f.status)) {
    return { ...f, nextReplyStartAt: minIso(f.nextReplyStartAt, m.createdAt) };
  }
  return f;
}

/** The episode of each metric: when it started and when (if) it ended. */
function episodes(f: SlaFacts): Record<SlaMetric, { start: string; end: string | null } | null> {
  return {
    firstReply: { start: f.ticketCreatedAt, end: f.firstReplyAt },
    nextReply: f.nextReplyStartAt ? { start: f.nextReplyStartAt, end: null } : f.lastNextReply ? { start: f.lastNextReply.startedAt, end: f.lastNextReply.achievedAt } : null,
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
    return s && s.breached && breaches[m] !== s.startedAt;
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

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
const same = (a: unknown, b: unknown) => lower(a) === lower(b);
const isSet = (v: unknown) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0);
const domainOf = (email: string | null) => (email && email.includes('@') ? email.slice(email.lastIndexOf('@') + 1).toLowerCase() : null);

/** The ticket value a condition looks at. */
function valueOf(t: SlaSampleTicket, field: string): unknown {
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
  const v = valueOf(t, c.field);
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
  p === null ? null : { id: p.id, name: p.name, timeMode: p.timeMode, targets: { firstReply: p.targets.firstReply[priority], nextReply: p.targets.nextReply[priority], resolution: p.targets.resolution[priority] } };
