import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import type { Key } from '../db/query.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import type { BatchMemo } from '../events/consumer.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { sendMessage } from '../events/sqs.ts';
import { createAnswerWrites, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { listAllFields } from '../ticket-fields/api.ts';
import { countOpenTickets, findTicket, listOpenTickets, ticketPresentCheck, type TicketRecord } from '../tickets/service.ts';
import { DEFAULT_SCHEDULE, type BusinessSchedule, type Clock } from './clock.ts';
import { applyMessage, applyPolicy, applyTicket, computeMetrics, pickPolicy, settle, type AppliedPolicy, type Metrics, type SlaFacts } from './engine.ts';
import { SLA_BREACHED, SLA_EVENT_SOURCE, type SlaBreachedData } from './events.ts';
import { CUSTOM_FIELD_PREFIX, MAX_POLICIES, SLA_METRICS } from './limits.ts';
import type { SlaPolicy, SlaPolicyInput, SlaSampleTicket, SlaState } from './model.ts';
import * as repo from './repository.ts';
import { DUE_SHARDS, StalePolicyError, StalePolicySetError, StaleScheduleError, StaleStateError, type PolicyRecord, type StateRecord } from './repository.ts';

export type { PolicyRecord };

export const toPolicyDto = ({ accountId: _a, ...p }: PolicyRecord): SlaPolicy => p;

const byPosition = (a: SlaPolicy, b: SlaPolicy) => a.position - b.position || (a.id < b.id ? -1 : 1);
const invalid = (issues: FieldIssue[]) => new ValidationError(`Invalid SLA policy: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
const retryStaleSet = <T>(op: () => Promise<T>) => retryOnConflict(op, (err) => err instanceof StalePolicySetError);
const retryStaleState = <T>(op: () => Promise<T>) => retryOnConflict(op, (err) => err instanceof StaleStateError);

/** What a policy's audit lists (decisions §15); its position moves with the account's order (`slaPolicies.order`). */
const AUDITED = ['name', 'description', 'isActive', 'timeMode', 'conditions', 'targets'] as const;

const policyAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}): TxWrite =>
  auditWrite({ accountId: p.accountId, resource: { type: 'sla_policy', id }, actor: userActor(p), via: 'api', changes, ...opts });

/**
 * The order of the policies and the business hours are settings of the
 * account, not of one policy: audits of resource `account`, fields
 * `slaPolicies.order` (the ids before and after) and `slaPolicies.schedule`
 * (null: the default schedule). None when the value did not change.
 */
function accountAudit(p: Principal, field: string, from: unknown, to: unknown, at: string): TxWrite[] {
  const changes = diffFields({ [field]: from }, { [field]: to }, [field]);
  return changes.length ? [auditWrite({ accountId: p.accountId, resource: { type: 'account', id: p.accountId }, actor: userActor(p), via: 'api', changes, at })] : [];
}

/** `customField:<id>` conditions must name a ticket field of the account. */
async function checkCustomFields(accountId: string, input: SlaPolicyInput) {
  const issues: FieldIssue[] = [];
  const refs = input.conditions.map((c, i) => ({ i, id: c.field.startsWith(CUSTOM_FIELD_PREFIX) ? c.field.slice(CUSTOM_FIELD_PREFIX.length) : null })).filter((r) => r.id);
  if (!refs.length) return;
  const fields = new Set((await listAllFields(accountId)).map((f) => f.id));
  for (const r of refs) if (!fields.has(r.id!)) issues.push({ field: `conditions.${r.i}.field`, message: `no ticket field ${r.id} in this account` });
  if (issues.length) throw invalid(issues);
}

export async function listPolicies(p: Principal): Promise<PolicyRecord[]> {
  return (await repo.listPolicies(p.accountId)).sort(byPosition);
}

/** Create a policy at the end of the order (decisions §10). */
export async function createPolicy(p: Principal, input: SlaPolicyInput, opts: CreateAnswer<PolicyRecord> = {}): Promise<PolicyRecord> {
  await checkCustomFields(p.accountId, input);
  return retryStaleSet(async () => {
    const set = await repo.getPolicySet(p.accountId);
    if (set.count >= MAX_POLICIES) throw invalid([{ field: 'body', message: `an account has at most ${MAX_POLICIES} SLA policies` }]);
    const now = new Date().toISOString();
    const policy: PolicyRecord = {
      id: newId('sla'),
      accountId: p.accountId,
      ...input,
      isActive: input.isActive ?? true,
      description: input.description ?? null,
      position: set.nextPosition,
      createdAt: now,
      updatedAt: now,
    };
    // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer
    // answers this policy instead of making a second one.
    await repo.createPolicy(policy, set, [policyAudit(p, policy.id, diffFields(null, policy, AUDITED), { at: now }), ...createAnswerWrites(opts, policy)]);
    return policy;
  });
}

/** Replace a policy's definition; its position stays. Existing tickets keep their applied targets until recompute or their next change. */
export async function updatePolicy(p: Principal, id: string, input: SlaPolicyInput): Promise<PolicyRecord> {
  if (!(await repo.getPolicy(p.accountId, id))) throw new NotFoundError('SLA policy');
  await checkCustomFields(p.accountId, input);
  const { name, timeMode, conditions, targets } = input;
  // Read again consistently and write only over what was read, so the audit's `from` is what the PUT replaced.
  return retryOnConflict(
    async () => {
      const current = await repo.getPolicy(p.accountId, id, true);
      if (!current) throw new NotFoundError('SLA policy');
      // Switching a policy on or off is its own decision: a PUT that does not mention isActive leaves it as it was.
      const isActive = input.isActive ?? current.isActive;
      const def = { name, description: input.description ?? null, isActive, timeMode, conditions, targets, updatedAt: new Date().toISOString() };
      // A PUT of the same definition still writes (as ever) but records no audit: nothing changed.
      const changes = diffFields(current, { ...current, ...def }, AUDITED);
      return repo.replacePolicy(current, def, changes.length ? [policyAudit(p, id, changes, { at: def.updatedAt })] : []);
    },
    (err) => err instanceof StalePolicyError,
  );
}

export async function deletePolicy(p: Principal, id: string): Promise<void> {
  await retryStaleSet(async () => repo.deletePolicy(p.accountId, id, await repo.getPolicySet(p.accountId), [policyAudit(p, id, [], { deleted: true })]));
}

/** decisions §10 (as §8): the order must name every policy of the account exactly once. */
export async function reorderPolicies(p: Principal, orderedIds: string[]): Promise<PolicyRecord[]> {
  await retryStaleSet(async () => {
    const set = await repo.getPolicySet(p.accountId);
    const before = (await repo.listPolicies(p.accountId)).sort(byPosition).map((x) => x.id);
    const existing = new Set(before);
    const issues: FieldIssue[] = [];
    const seen = new Set<string>();
    orderedIds.forEach((id, i) => {
      if (seen.has(id)) issues.push({ field: `orderedIds.${i}`, message: `${id} is listed more than once` });
      else if (!existing.has(id)) issues.push({ field: `orderedIds.${i}`, message: `no SLA policy ${id} in this account` });
      seen.add(id);
    });
    const missing = [...existing].filter((id) => !seen.has(id));
    if (missing.length) issues.push({ field: 'orderedIds', message: `every policy must be listed exactly once; missing ${missing.join(', ')}` });
    if (issues.length) throw new ValidationError(`Invalid order: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);
    const now = new Date().toISOString();
    if (orderedIds.length) await repo.reorderPolicies(p.accountId, orderedIds, set, now, accountAudit(p, 'slaPolicies.order', before, orderedIds, now));
  });
  return listPolicies(p);
}

/** Which policy a sample ticket would get, and its targets for the ticket's priority. */
export async function testPolicies(p: Principal, ticket: SlaSampleTicket) {
  const policy = pickPolicy(await repo.listPolicies(p.accountId), ticket);
  const applied = applyPolicy(policy, ticket.priority);
  return { matched: policy !== null, policy: policy && toPolicyDto(policy as PolicyRecord), targets: applied?.targets ?? null };
}

export async function getSchedule(p: Principal) {
  const own = await repo.getSchedule(p.accountId);
  return { schedule: own ?? DEFAULT_SCHEDULE, isDefault: own === null };
}

/** Set (or, with null, reset) the account's business hours. Like policy changes, they reach existing tickets at recompute or their next change. */
export async function setSchedule(p: Principal, schedule: BusinessSchedule | null) {
  await retryOnConflict(
    async () => {
      const current = await repo.getScheduleRecord(p.accountId);
      const now = new Date().toISOString();
      await repo.putSchedule(p.accountId, schedule, now, current?.updatedAt ?? null, accountAudit(p, 'slaPolicies.schedule', current?.schedule ?? null, schedule, now));
    },
    (err) => err instanceof StaleScheduleError,
  );
  return getSchedule(p);
}

/** The clock a policy runs on: every minute, or the account's business hours (`cache` holds schedules already read, by account). */
async function clockFor(accountId: string, policy: AppliedPolicy | null, cache?: Map<string, Promise<BusinessSchedule | null>>): Promise<Clock> {
  if (!policy || policy.timeMode === 'calendarHours') return { mode: 'calendarHours' };
  let schedule = cache?.get(accountId);
  if (!schedule) {
    schedule = repo.getSchedule(accountId);
    cache?.set(accountId, schedule);
  }
  return { mode: 'businessHours', schedule: (await schedule) ?? DEFAULT_SCHEDULE };
}

/** The clocks of an account whose settings are read: no read of its schedule. */
const scheduleOf = (accountId: string, settings: repo.SlaSettings) => new Map([[accountId, Promise.resolve(settings.schedule)]]);

/**
 * What the event consumer knows before it reads anything of the ticket: the
 * account's SLA settings in one Query (repo.getSlaSettings), shared by the
 * events of one batch (`batch`), and the ticket as its event carries it.
 */
export interface SlaEventContext {
  batch?: BatchMemo;
  /** The ticket as a ticket.created event carries it (version 1), when not truncated; otherwise it is read. */
  created?: TicketRecord;
}

const settingsFor = (accountId: string, batch?: BatchMemo) => {
  const load = () => repo.getSlaSettings(accountId);
  return batch ? batch(`sla-settings:${accountId}`, load) : load();
};

function toStateDto(ticketId: string, facts: SlaFacts, policy: AppliedPolicy | null, metrics: Metrics, updatedAt: string): SlaState {
  return {
    ticketId,
    policyId: policy?.id ?? null,
    policyName: policy?.name ?? null,
    timeMode: policy?.timeMode ?? null,
    metrics,
    breached: SLA_METRICS.some((m) => metrics[m]?.breached),
    paused: facts.status === 'pending',
    updatedAt,
  };
}

/** A ticket's SLA state now; before the consumer has seen the ticket, it is worked out from the ticket itself. */
export async function getTicketState(p: Principal, ticketId: string): Promise<SlaState> {
  const [ticket, state] = await Promise.all([findTicket(p.accountId, ticketId), repo.getState(p.accountId, ticketId)]);
  if (!ticket) throw new NotFoundError('Ticket');
  const now = Date.now();
  if (state) return toStateDto(ticketId, state.facts, state.policy, computeMetrics(state.facts, state.policy, await clockFor(p.accountId, state.policy), state.breaches, now), state.updatedAt);
  const facts = applyTicket(null, ticket).facts;
  const policy = applyPolicy(pickPolicy(await repo.listPolicies(p.accountId), ticket), ticket.priority);
  return toStateDto(ticketId, facts, policy, computeMetrics(facts, policy, await clockFor(p.accountId, policy), {}, now), ticket.updatedAt);
}

/**
 * Write a ticket's state as settle() works it out at `now`: metrics late and
 * not yet reported are marked and their sla.breached events recorded in the
 * same transaction (exactly once per episode: the state's version guards it).
 */
async function save(accountId: string, ticketId: string, current: StateRecord | null, facts: SlaFacts, policy: AppliedPolicy | null, clock: Clock, now: number, checks: TxWrite[] = []): Promise<void> {
  const { next, breached, write } = settle(current, facts, policy, clock, now);
  if (!write) return;
  const at = new Date(now).toISOString();
  const events = breached.map(({ metric, state: s }) => {
    const data: SlaBreachedData = {
      ticket: { id: ticketId },
      metric,
      policy: { id: policy!.id, name: policy!.name },
      timeMode: policy!.timeMode,
      targetMinutes: s.targetMinutes,
      startedAt: s.startedAt,
      dueAt: s.dueAt!,
      achievedAt: s.achievedAt,
    };
    return newDomainEvent(accountId, SLA_BREACHED, data, at);
  });
  await repo.putState({ accountId, ticketId, ...next, version: (current?.version ?? 0) + 1, updatedAt: at }, current?.version ?? null, [...outboxWrites(events, SLA_EVENT_SOURCE), ...checks]);
}

/** Re-pick the policy for a ticket as it is now. */
const policyFor = (policies: PolicyRecord[], t: TicketRecord) => applyPolicy(pickPolicy(policies, t), t.priority);

/**
 * A ticket event arrived: bring the state up to the ticket as it is now (read
 * fresh, so an event redelivered or overtaken by a later one changes nothing)
 * and re-pick its policy. A deleted ticket loses its state.
 *
 * An account that has never had a policy keeps no state (docs/decisions.md,
 * "SLA state only where there are policies"): one Query, shared by the
 * batch, and nothing else read or written. A ticket.created takes the ticket
 * from the event instead of reading it, and assumes no state yet (the put's
 * condition checks it; the version guard makes an older version harmless);
 * its first state is written on the condition that the ticket still exists,
 * so an event overtaken by the ticket's deletion leaves no state behind.
 */
export function onTicketChanged(accountId: string, ticketId: string, now = Date.now(), ctx: SlaEventContext = {}): Promise<void> {
  let created = ctx.created;
  return retryStaleState(async () => {
    // The settings first: for an account that has never had a policy (most), they are the only read.
    const settings = await settingsFor(accountId, ctx.batch);
    if (!settings.everHadPolicies) return;
    // The event's copy serves the first attempt; a retry after a lost race reads the ticket. Beside a state it
    // changes nothing (version 1 is never newer than a state's facts).
    const copy = created;
    created = undefined;
    // Nor is its state read: a ticket.created finds none (its first state is put on the condition that there is
    // none), and a redelivered or overtaken one fails that condition and is retried with both read.
    const [state, read] = await Promise.all([copy ? null : repo.getState(accountId, ticketId), copy ? undefined : findTicket(accountId, ticketId)]);
    const ticket = copy ?? read ?? null;
    if (!ticket) {
      if (state) await repo.deleteState(accountId, ticketId);
      return;
    }
    const { facts, changed } = applyTicket(state?.facts ?? null, ticket);
    if (state && !changed) return;
    const policy = policyFor(settings.policies, ticket);
    try {
      await save(accountId, ticketId, state, facts, policy, await clockFor(accountId, policy, scheduleOf(accountId, settings)), now, copy ? [ticketPresentCheck(accountId, ticketId)] : []);
    } catch (err) {
      // Deleted since its ticket.created was written: no state for it (ticket.deleted removes any other).
      if (!(copy && err instanceof NotFoundError)) throw err;
    }
  });
}

export const onTicketDeleted = (accountId: string, ticketId: string) => repo.deleteState(accountId, ticketId);

/** A message arrived: requests and responses move the reply metrics; notes do nothing. An account that never had a policy keeps no state (onTicketChanged). */
export function onMessage(accountId: string, message: { id: string; ticketId: string; type: string; createdAt: string }, now = Date.now(), ctx: Pick<SlaEventContext, 'batch'> = {}): Promise<void> {
  if (message.type !== 'request' && message.type !== 'response') return Promise.resolve();
  return retryStaleState(async () => {
    const settings = await settingsFor(accountId, ctx.batch);
    if (!settings.everHadPolicies) return;
    const state = await repo.getState(accountId, message.ticketId);
    let facts: SlaFacts;
    let policy: AppliedPolicy | null;
    if (state) {
      facts = state.facts;
      policy = state.policy;
    } else {
      // The message overtook the ticket's own events: start from the ticket.
      const ticket = await findTicket(accountId, message.ticketId);
      if (!ticket) return;
      facts = applyTicket(null, ticket).facts;
      policy = policyFor(settings.policies, ticket);
    }
    await save(accountId, message.ticketId, state, applyMessage(facts, message), policy, await clockFor(accountId, policy, scheduleOf(accountId, settings)), now);
  });
}

/** Most states the breach check handles per shard per run; the rest wait a minute, earliest first. */
const CHECK_LIMIT = 200;

/**
 * The per-minute breach check: each shard of the due index is read up to
 * `now` (a Query, never a Scan); each state found is re-read, its late
 * metrics marked and their events recorded, and its index entry moved to the
 * next deadline (or dropped).
 */
export async function checkBreaches(now = Date.now()): Promise<{ checked: number }> {
  const nowIso = new Date(now).toISOString();
  const schedules = new Map<string, Promise<BusinessSchedule | null>>();
  let checked = 0;
  await Promise.all(
    Array.from({ length: DUE_SHARDS }, async (_, shard) => {
      for (const due of await repo.dueStates(shard, nowIso, CHECK_LIMIT)) {
        checked += 1;
        await retryStaleState(async () => {
          const state = await repo.getState(due.accountId, due.ticketId);
          if (!state) return;
          await save(due.accountId, due.ticketId, state, state.facts, state.policy, await clockFor(due.accountId, state.policy, schedules), now);
        });
      }
    }),
  );
  return { checked };
}

/** A recompute batch message: one page of an account's open tickets. */
export interface RecomputeMessage {
  accountId: string;
  startKey?: Key;
}

/** Tickets per recompute batch; the next page goes back on the queue as its own message. */
export const RECOMPUTE_BATCH = 100;
const RECOMPUTE_PARALLEL = 10;

/** Start a recompute of every open ticket: counted now, done in the background in batches (decisions §10). */
export async function requestRecompute(p: Principal, queueUrl: string): Promise<{ accepted: true; ticketCount: number }> {
  const ticketCount = await countOpenTickets(p.accountId, 1_000_000);
  if (ticketCount) await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ accountId: p.accountId } satisfies RecomputeMessage), MessageGroupId: p.accountId });
  return { accepted: true, ticketCount };
}

/**
 * One recompute batch: the page's tickets get the current policies and
 * schedule (facts are kept; a ticket the consumer has not seen yet starts
 * from the ticket), then the next page is queued. Redelivery redoes a page,
 * which changes nothing the second time.
 */
export async function recomputeBatch(msg: RecomputeMessage, queueUrl: string, now = Date.now()): Promise<{ tickets: number }> {
  const page = await listOpenTickets(msg.accountId, RECOMPUTE_BATCH, msg.startKey);
  const policies = await repo.listPolicies(msg.accountId);
  const schedules = new Map<string, Promise<BusinessSchedule | null>>();
  const prefetched = await repo.getStates(
    msg.accountId,
    page.tickets.map((t) => t.id),
  );
  const queue = [...page.tickets];
  await Promise.all(
    Array.from({ length: RECOMPUTE_PARALLEL }, async () => {
      for (let t = queue.shift(); t; t = queue.shift()) {
        const ticket = t;
        let first = true;
        await retryStaleState(async () => {
          // The batch read serves the first attempt; a lost race re-reads this one state.
          const state = first ? (prefetched.get(ticket.id) ?? null) : await repo.getState(msg.accountId, ticket.id);
          first = false;
          const facts = applyTicket(state?.facts ?? null, ticket).facts;
          const policy = policyFor(policies, ticket);
          await save(msg.accountId, ticket.id, state, facts, policy, await clockFor(msg.accountId, policy, schedules), now);
        });
      }
    }),
  );
  if (page.nextKey)
    await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify({ accountId: msg.accountId, startKey: page.nextKey } satisfies RecomputeMessage), MessageGroupId: msg.accountId });
  return { tickets: page.tickets.length };
}
