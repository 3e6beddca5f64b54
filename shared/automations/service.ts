import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import type { Principal, SystemPrincipal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import type { BatchMemo } from '../events/consumer.ts';
import type { TicketEventDetail } from '../tickets/events.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { listAllFields, loadPatterns, optionIdsByValue } from '../ticket-fields/api.ts';
import type { UpdateTicketInput } from '../tickets/model.ts';
import { getTicket, planTicketUpdate } from '../tickets/service.ts';
import { explainRule, firstMatch, isTimeRule, planActions, type EngineTicket } from './engine.ts';
import { MAX_AUTOMATIONS } from './limits.ts';
import type { Automation, CreateAutomationInput, DryRunInput, DryRunResult, Rule, UpdateAutomationInput } from './model.ts';
import * as repo from './repository.ts';
import type { AutomationRecord, AutomationSet } from './repository.ts';
import { referencedValues, validateRule } from './validate.ts';

const toDto = ({ accountId: _a, ...a }: AutomationRecord, position: number): Automation => ({ ...a, position });

const invalid = (issues: FieldIssue[]) => new ValidationError(`Invalid automation: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);

/** Check a rule against decisions §8 and the account's custom fields (only the options it names are looked up). */
async function checkRule(accountId: string, rule: Rule): Promise<void> {
  const values = referencedValues(rule);
  const fields = values.size ? new Map((await listAllFields(accountId)).map((f) => [f.id, f])) : new Map();
  const options = new Map<string, Set<string>>();
  await Promise.all(
    [...values].map(async ([id, wanted]) => {
      const f = fields.get(id);
      if (f && (f.fieldType === 'dropdown' || f.fieldType === 'multiselect') && wanted.size) options.set(id, new Set((await optionIdsByValue(accountId, id, [...wanted])).keys()));
    }),
  );
  // A regex field's value is checked with RE2, which loads on first use (ticket-fields/pattern.ts).
  if ([...values.keys()].some((id) => fields.get(id)?.fieldType === 'regex')) await loadPatterns();
  const issues = validateRule(rule, { fields, options });
  if (issues.length) throw invalid(issues);
}

const activeTimeRules = (list: AutomationRecord[]) => list.filter((a) => a.isActive && isTimeRule(a.rule)).length;

/** The set after a change: same order unless given, next version, recounted time rules. */
const nextSet = (set: AutomationSet, automations: AutomationRecord[], order = automations.map((a) => a.id)): AutomationSet => ({
  order,
  version: set.version + 1,
  timeRules: activeTimeRules(automations),
});

/** What an automation's audit lists (decisions §15). */
const AUDITED = ['name', 'description', 'isActive', 'rule'] as const;

const automationAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}): TxWrite =>
  auditWrite({ accountId: p.accountId, resource: { type: 'automation', id }, actor: userActor(p), via: 'api', changes, ...opts });

/**
 * A new evaluation order is a setting of the account, not of one automation
 * (one audit, however many moved): `automations.order`, the ids before and after.
 */
function orderAudit(p: Principal, from: string[], to: string[]): TxWrite[] {
  const changes = diffFields({ 'automations.order': from }, { 'automations.order': to }, ['automations.order']);
  return changes.length ? [auditWrite({ accountId: p.accountId, resource: { type: 'account', id: p.accountId }, actor: userActor(p), via: 'api', changes })] : [];
}

/** Every automation of the account, in evaluation order. */
export async function listAutomations(p: Principal): Promise<Automation[]> {
  const { automations } = await repo.loadAutomations(p.accountId);
  return automations.map((a, i) => toDto(a, i + 1));
}

/** Create an automation at the end of the order. */
export async function createAutomation(p: Principal, input: CreateAutomationInput, opts: CreateAnswer<Automation> = {}): Promise<Automation> {
  await checkRule(p.accountId, input.rule);
  return retryOnConflict(async () => {
    const { set, automations } = await repo.loadAutomations(p.accountId);
    if (automations.length >= MAX_AUTOMATIONS) throw invalid([{ field: 'body', message: `an account has at most ${MAX_AUTOMATIONS} automations` }]);
    const now = new Date().toISOString();
    const record: AutomationRecord = {
      id: newId('aut'),
      accountId: p.accountId,
      name: input.name,
      description: input.description ?? null,
      isActive: input.isActive,
      rule: input.rule,
      createdAt: now,
      updatedAt: now,
    };
    const all = [...automations, record];
    const created = toDto(record, all.length);
    // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer
    // answers this automation instead of making a second one.
    await repo.commitAutomations(p.accountId, nextSet(set, all), [
      repo.putAutomationWrite(record),
      automationAudit(p, record.id, diffFields(null, record, AUDITED), { at: now }),
      ...createAnswerWrites(opts, created),
    ]);
    return created;
  }, isRetryableConflict);
}

/** Only the given fields change; the rule is replaced whole. */
export async function updateAutomation(p: Principal, id: string, input: UpdateAutomationInput): Promise<Automation> {
  if (input.rule) await checkRule(p.accountId, input.rule);
  return retryOnConflict(async () => {
    const { set, automations } = await repo.loadAutomations(p.accountId);
    const index = automations.findIndex((a) => a.id === id);
    if (index < 0) throw new NotFoundError('Automation');
    const given = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    if (!Object.keys(given).length) return toDto(automations[index], index + 1);
    const next: AutomationRecord = { ...automations[index], ...given, updatedAt: new Date().toISOString() };
    const all = automations.map((a) => (a.id === id ? next : a));
    // The same values given again still write (as ever) but record no audit: nothing changed.
    const changes = diffFields(automations[index], next, AUDITED);
    await repo.commitAutomations(p.accountId, nextSet(set, all), [repo.putAutomationWrite(next), ...(changes.length ? [automationAudit(p, id, changes, { at: next.updatedAt })] : [])]);
    return toDto(next, index + 1);
  });
}

export async function deleteAutomation(p: Principal, id: string): Promise<void> {
  await retryOnConflict(async () => {
    const { set, automations } = await repo.loadAutomations(p.accountId);
    if (!automations.some((a) => a.id === id)) throw new NotFoundError('Automation');
    const rest = automations.filter((a) => a.id !== id);
    await repo.commitAutomations(p.accountId, nextSet(set, rest), [repo.deleteAutomationWrite(p.accountId, id), automationAudit(p, id, [], { deleted: true })]);
  });
}

/** New evaluation order: every id of the account exactly once (decisions §8), or nothing changes. */
export async function reorderAutomations(p: Principal, orderedIds: string[]): Promise<Automation[]> {
  return retryOnConflict(async () => {
    const { set, automations } = await repo.loadAutomations(p.accountId);
    const known = new Set(automations.map((a) => a.id));
    const issues: FieldIssue[] = [];
    const seen = new Set<string>();
    orderedIds.forEach((id, i) => {
      if (!known.has(id)) issues.push({ field: `orderedIds.${i}`, message: `${id} is not an automation of this account` });
      else if (seen.has(id)) issues.push({ field: `orderedIds.${i}`, message: `${id} is listed more than once` });
      seen.add(id);
    });
    const missing = [...known].filter((id) => !seen.has(id));
    if (missing.length) issues.push({ field: 'orderedIds', message: `must list every automation of the account; missing ${missing.join(', ')}` });
    if (issues.length) throw invalid(issues);
    const byId = new Map(automations.map((a) => [a.id, a]));
    const ordered = orderedIds.map((id) => byId.get(id)!);
    const before = automations.map((a) => a.id);
    await repo.commitAutomations(p.accountId, nextSet(set, ordered, orderedIds), orderAudit(p, before, orderedIds));
    return ordered.map((a, i) => toDto(a, i + 1));
  });
}

/**
 * Explain, without writing, what evaluation would do to a ticket: each
 * automation in order with each condition's actual value and outcome, which
 * one would apply, and the changes its actions would make.
 */
export async function dryRun(p: Principal, input: DryRunInput): Promise<DryRunResult> {
  if (Boolean(input.ticketId) === Boolean(input.ticket)) throw invalid([{ field: 'ticketId', message: 'give exactly one of ticketId or ticket' }]);
  const ticket: EngineTicket & { status?: string } = input.ticketId ? await getTicket(p, input.ticketId) : input.ticket!;
  const now = input.now ? new Date(input.now) : new Date();
  const { automations } = await repo.loadAutomations(p.accountId);
  const results = automations.map((a, i) => {
    const { matched, conditions } = explainRule(a.rule, ticket, now);
    return { id: a.id, name: a.name, position: i + 1, isActive: a.isActive, matched, conditions };
  });
  // A closed ticket is never changed, so nothing applies to it.
  const winner = ticket.status === 'closed' ? null : firstMatch(automations, ticket, now);
  return { now: now.toISOString(), matchedAutomationId: winner?.id ?? null, changes: winner ? planActions(winner.rule.actions, ticket).changes : [], automations: results };
}

export type RunOutcome = 'applied' | 'unchanged' | 'no-match' | 'duplicate' | 'skipped';

export interface RunOptions {
  now: Date;
  /** The event being handled: recorded with the change so a redelivery applies nothing. */
  eventId?: string;
  /** The hourly pass: only automations with a time condition take part. */
  timeOnly?: boolean;
  /** Automations already read for this batch (the hourly consumer reads them once per message). */
  automations?: AutomationRecord[];
  /**
   * The ticket as its ticket.created event carries it: when no automation
   * matches it, that is the answer, with no read of the ticket. A match is
   * applied as ever, to the ticket read fresh.
   */
  created?: EngineTicket;
}

/**
 * Evaluate a ticket against the account's automations and apply the first
 * match's actions as the system caller, through the same update plan as a
 * PUT (counters, option usage and events stay exact). Nothing is written when
 * the actions would change nothing.
 */
export function runAutomations(accountId: string, ticketId: string, opts: RunOptions): Promise<RunOutcome> {
  return retryOnConflict(async () => {
    // Accounts without automations (most events) cost one Query.
    const all = opts.automations ?? (await repo.loadAutomations(accountId)).automations;
    const candidates = opts.timeOnly ? all.filter((a) => isTimeRule(a.rule)) : all;
    if (!candidates.some((a) => a.isActive)) return 'no-match';
    if (opts.created && !firstMatch(candidates, opts.created, opts.now)) return 'no-match';
    // No read of the run marker first: its put, in the change's own transaction, refuses a second run of the event
    // ('duplicate' below), and a redelivery after the change finds nothing left to do ('unchanged').
    // One read of the ticket, the update plan's: the rule is evaluated on the ticket the plan changes (its write is
    // version-checked), so nothing can come between them. The caller names the winner once it is known, before the
    // plan records its events and audit.
    const caller: SystemPrincipal = { accountId, system: 'automation', automationId: '' };
    const chosen: { winner?: AutomationRecord | null } = {};
    try {
      const plan = await planTicketUpdate(caller, ticketId, (ticket) => {
        const winner = (chosen.winner = ticket.status === 'closed' ? null : firstMatch(candidates, ticket, opts.now));
        if (!winner) return {};
        caller.automationId = winner.id;
        return planActions(winner.rule.actions, ticket).input as UpdateTicketInput;
      });
      const winner = chosen.winner;
      if (!winner) return 'no-match';
      if (!plan.writes.length) return 'unchanged';
      await transactWrite([...plan.writes, ...(opts.eventId ? [repo.runMarkerWrite(accountId, opts.eventId, winner.id, opts.now)] : [])]);
      return 'applied';
    } catch (err) {
      if (err instanceof repo.AlreadyAppliedError) return 'duplicate';
      // A ticket deleted (the plan's read) or closed since its event: nothing to do.
      if (chosen.winner === undefined && err instanceof NotFoundError) return 'skipped';
      if (err instanceof RuleViolationError && err.rule === 'TICKET_CLOSED') return 'skipped';
      // A rule that no longer fits the account (an assignee deactivated, a field deleted) cannot succeed on retry.
      if (err instanceof ValidationError || err instanceof RuleViolationError || err instanceof NotFoundError) {
        logger.warn('automation could not apply', { accountId, ticketId, automationId: chosen.winner?.id, err: err.message });
        return 'skipped';
      }
      throw err;
    }
  });
}

/** The automations consumer: ticket.created / ticket.updated not caused by an automation (so automations never loop). */
export async function onTicketEvent(detail: TicketEventDetail, now = new Date(), batch?: BatchMemo): Promise<RunOutcome> {
  if (detail.actor?.type === 'automation') return 'skipped';
  if (detail.event !== 'ticket.created' && detail.event !== 'ticket.updated') return 'skipped';
  const ticket = detail.data.ticket as { id: string } & Partial<EngineTicket> & { groupId?: string | null };
  // The ticket as committed (version 1), unless its values were shortened to fit the event, or it joined a group:
  // distribution may have assigned it in the same transaction (its ticket.updated is evaluated on its own).
  const created = detail.event === 'ticket.created' && !detail.truncated && typeof ticket.subject === 'string' && ticket.groupId === null ? (ticket as EngineTicket) : undefined;
  // The events of one batch (a burst of one account) share one read of its automations.
  const automations = batch && (await batch(`automations:${detail.accountId}`, () => repo.loadAutomations(detail.accountId))).automations;
  return runAutomations(detail.accountId, ticket.id, { now, eventId: detail.eventId, created, automations });
}
