import { auditWrite, userActor, SYSTEM_ACTOR } from '../audits/service.ts';
import type { AuditActor, AuditChange, AuditVia } from '../audits/model.ts';
import { actorOf, hasDeskRole, isMailCaller, isSystemCaller, type Caller, type MailCaller, type Principal, type SystemPrincipal } from '../auth/principal.ts';
import { requesterWrites } from '../contacts/service.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { ticketEventWrites } from './change-tally.ts';
import { tombstoneWrite } from '../exports/api.ts';
import { checkGroup, OPEN_STATUSES, ticketGroupChange } from '../groups/service.ts';
import type { TicketEventDetail } from './events.ts';
import { newId } from '../ids.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import type { FieldRecord } from '../ticket-fields/api.ts';
import { loadPatternsFor, mergeCustomFields } from '../ticket-fields/values.ts';
import { fieldMap, fieldsStampOf, optionUsageWrites } from './custom-fields.ts';
import { findUser as getUser } from '../users/api.ts';
import type { CreateTicketInput, ListTicketsQuery, UpdateTicketInput } from './model.ts';
import * as repo from './repository.ts';
import { appliedUpdate, changeEvents, newTicketEvent, ticketChanges, toTicketDto } from './rules.ts';
import type { TicketFilter, TicketRecord } from './repository.ts';

export { toTicketDto };
export { ticketRatingWrites } from './rating.ts';

/** The audit actor of a change an inbound mail made (decisions §15: `email`, no id). */
export const MAIL_ACTOR: AuditActor = { type: 'email', id: null };

const invalid = (issues: FieldIssue[]) => new ValidationError(`Invalid ticket: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);

/** decisions §6: an assignee is an active user of the account with agent role or above. */
async function checkAssignee(accountId: string, assigneeId: string | null | undefined, issues: FieldIssue[]) {
  if (!assigneeId) return;
  const user = await getUser(accountId, assigneeId);
  if (user?.status !== 'active' || !hasDeskRole(user.role, 'agent')) issues.push({ field: 'assigneeId', message: 'must be an active user of the account with agent role or above' });
}

export async function getTicket(p: Pick<Principal, 'accountId'>, id: string): Promise<TicketRecord> {
  const t = await repo.getTicket(p.accountId, id);
  if (!t) throw new NotFoundError('Ticket');
  return t;
}

/** Whether the ticket exists (its history stays readable by admins once it does not). */
export const ticketExists = async (accountId: string, id: string): Promise<boolean> => (await repo.getTicket(accountId, id)) !== null;

/** A ticket, or null once deleted (consumers of its events: the email sender). */
export const findTicket = (accountId: string, id: string): Promise<TicketRecord | null> => repo.getTicket(accountId, id);

/** A ticket as last written (a strongly consistent read), or null once deleted: what view counts judge. */
export const findTicketNow = (accountId: string, id: string): Promise<TicketRecord | null> => repo.getTicket(accountId, id, { consistent: true });

/** Proves, in another module's transaction, that the ticket still exists (the SLA consumer's first state from an event's copy); NotFoundError if not. */
export const ticketPresentCheck = (accountId: string, id: string): TxWrite => repo.ticketPresentCheck(accountId, id);

/** Proves, in another module's transaction, that the ticket is still as read (a message added without a ticket update). */
export const ticketUnchangedCheck = (t: TicketRecord): TxWrite => repo.ticketUnchangedCheck(t);

/**
 * Create a ticket; its option usage, its requester's counts (and contact, if
 * new) and its ticket.created event commit with it.
 */
export function createTicket(p: Principal | MailCaller, input: CreateTicketInput, opts: CreateTicketOptions = {}): Promise<TicketRecord> {
  return retryOnConflict(() => createTicketOnce(p, input, opts), isRetryableConflict);
}

/** What an inbound mail adds to a ticket's creation (decisions §17): the id it chose first (its attachments' keys name it) and its first message's writes. */
export interface CreateTicketOptions extends CreateAnswer<TicketRecord> {
  id?: string;
  related?: (ticket: TicketRecord) => TxWrite[];
  /** How the creation came, for its audit (by default the caller's). */
  context?: Partial<ChangeContext>;
}

async function createTicketOnce(p: Principal | MailCaller, input: CreateTicketInput, opts: CreateTicketOptions): Promise<TicketRecord> {
  if (input.status === 'closed') throw new RuleViolationError('CLOSED_STATUS_SYSTEM_ONLY', 'Only automations can close tickets');
  const issues: FieldIssue[] = [];
  // The requester's contact reads depend on nothing else read here: they run beside the checks, not after them (one
  // round trip fewer per create, issue 42). On a refused create they are wasted reads, never writes.
  const requesterEmail = input.requesterEmail ?? null;
  const requesterRead = requesterEmail ? requesterWrites(p.accountId, [{ email: requesterEmail, name: input.requesterName ?? null, delta: 1 }]) : Promise.resolve([]);
  requesterRead.catch(() => undefined);
  const [fields, , group] = await Promise.all([fieldMap(p.accountId, fieldsStampOf(p)), checkAssignee(p.accountId, input.assigneeId, issues), checkGroup(p.accountId, input.groupId, issues)]);
  await loadPatternsFor(input.customFields, fields);
  const { merged, issues: fieldIssues } = mergeCustomFields([], input.customFields, fields, true);
  issues.push(...fieldIssues);
  const usage = fieldIssues.length ? [] : await optionUsageWrites(p.accountId, fields, [], merged, issues);
  if (issues.length) throw invalid(issues);

  const now = new Date();
  const at = now.toISOString();
  const ticket: TicketRecord = {
    id: opts.id ?? newId('tkt', now.getTime()),
    accountId: p.accountId,
    subject: input.subject,
    status: input.status,
    priority: input.priority,
    type: input.type,
    assigneeId: input.assigneeId ?? null,
    requesterEmail: input.requesterEmail ?? null,
    requesterName: input.requesterName ?? null,
    groupId: input.groupId ?? null,
    tags: input.tags,
    customFields: merged,
    mergedInto: null,
    satisfactionRating: null,
    createdAt: at,
    updatedAt: at,
    version: 1,
  };
  const events: TicketEventDetail[] = [newTicketEvent(p.accountId, { event: 'ticket.created', timestamp: at, data: { ticket: toTicketDto(ticket) } })];
  // Distribution assigns after creation, as a manual assignment would: ticket.updated and ticket.assignment.changed follow ticket.created.
  const distribution = await ticketGroupChange(p.accountId, null, ticket, { group });
  const created = distribution.assigneeId ? { ...ticket, assigneeId: distribution.assigneeId } : ticket;
  if (distribution.assigneeId) events.push(...changeEvents(p.accountId, ticket, created, at));
  const requester = await requesterRead;
  // Two audits when distribution assigns, as two sets of events: the caller's create, then the distribution's assignment.
  const audits = [ticketAudit(null, ticket, fields, contextOf(p, opts.context))];
  if (distribution.assigneeId) audits.push(ticketAudit(ticket, created, fields, { via: 'distribution', actor: SYSTEM_ACTOR }));
  const answer = createAnswerWrites(opts, created);
  await repo.createTicket(created, [...usage, ...requester, ...distribution.writes, ...ticketEventWrites(events), ...audits, ...(opts.related?.(created) ?? []), ...answer]);
  return created;
}

/** How a change came, for its audit (decisions §15): by default a user's request through the API, or an automation. */
export interface ChangeContext {
  via: AuditVia;
  actor: AuditActor;
  /** The message the change came with (a message's ticket_update, an inbound mail). */
  messageId?: string | null;
}

const contextOf = (p: Caller, given?: Partial<ChangeContext>): ChangeContext => ({
  via: given?.via ?? (isSystemCaller(p) ? 'automation' : isMailCaller(p) ? 'email' : 'api'),
  actor: given?.actor ?? (isSystemCaller(p) ? { type: 'automation', id: p.automationId } : isMailCaller(p) ? MAIL_ACTOR : userActor(p)),
  messageId: given?.messageId ?? null,
});

/** The audit write of a ticket change (or of a message added with no change: `changes` empty), ordered by the ticket's version. */
function ticketAudit(
  before: TicketRecord | null,
  after: TicketRecord,
  fields: ReadonlyMap<string, Pick<FieldRecord, 'fieldKey'>>,
  ctx: ChangeContext,
  opts: { deleted?: boolean; at?: string; extra?: AuditChange[] } = {},
): TxWrite {
  return auditWrite({
    accountId: after.accountId,
    resource: { type: 'ticket', id: after.id },
    actor: ctx.actor,
    via: ctx.via,
    changes: opts.deleted ? [] : [...ticketChanges(before, after, fields), ...(opts.extra ?? [])],
    messageId: ctx.messageId ?? null,
    deleted: opts.deleted,
    version: after.version,
    at: opts.at ?? after.updatedAt,
  });
}

/** The audit of a message added to a ticket that it does not change (decisions §15: one audit, with the message's id). */
export const messageAuditWrite = (ticket: TicketRecord, ctx: ChangeContext): TxWrite => ticketAudit(ticket, ticket, new Map(), ctx, { at: new Date().toISOString() });

/** Writes that move a ticket's count from one requester to another. */
async function requesterChangeWrites(accountId: string, before: TicketRecord | null, after: TicketRecord | null): Promise<TxWrite[]> {
  const from = before?.requesterEmail?.toLowerCase() ?? null;
  const to = after?.requesterEmail?.toLowerCase() ?? null;
  if (from === to) return [];
  return requesterWrites(accountId, [
    ...(from ? [{ email: from, name: null, delta: -1 as const }] : []),
    ...(to ? [{ email: after!.requesterEmail!, name: after!.requesterName, delta: 1 as const }] : []),
  ]);
}

/**
 * What to apply to a ticket: the fields of a PUT, or a function of the ticket
 * as read (a bulk job's addTags/removeTags edit the tags each attempt reads,
 * so a retry after a conflict never loses a concurrent change).
 */
export type TicketEdit = UpdateTicketInput | ((current: TicketRecord) => UpdateTicketInput);

/** A computed ticket change, ready to commit alone or inside another write's transaction. */
export interface TicketChangePlan {
  current: TicketRecord;
  next: TicketRecord;
  /** The ticket replace (version-checked), option usage, requester counts and events; empty when nothing changes. */
  writes: TxWrite[];
}

/**
 * Work out what applying the given fields would do to a ticket, with every
 * rule of decisions §6 checked; nothing is written.
 */
export async function planTicketUpdate(p: Caller, id: string, given: TicketEdit, context?: Partial<ChangeContext>): Promise<TicketChangePlan> {
  const current = await getTicket(p, id);
  const input = typeof given === 'function' ? given(current) : given;
  if (current.status === 'closed') throw new RuleViolationError('TICKET_CLOSED', 'A closed ticket cannot be changed');
  // decisions §8: only automations (the system caller) close tickets.
  if (input.status === 'closed' && !isSystemCaller(p)) throw new RuleViolationError('CLOSED_STATUS_SYSTEM_ONLY', 'Only automations can close tickets');

  const issues: FieldIssue[] = [];
  if (input.assigneeId !== undefined && input.assigneeId !== current.assigneeId) await checkAssignee(p.accountId, input.assigneeId, issues);
  const newGroup = input.groupId !== undefined && input.groupId !== current.groupId ? await checkGroup(p.accountId, input.groupId, issues) : null;
  let customFields = current.customFields;
  let usage: TxWrite[] = [];
  let fields = new Map<string, FieldRecord>();
  if (input.customFields !== undefined) {
    fields = await fieldMap(p.accountId, fieldsStampOf(p));
    await loadPatternsFor(input.customFields, fields);
    const merged = mergeCustomFields(current.customFields, input.customFields, fields, false);
    issues.push(...merged.issues);
    customFields = merged.merged;
    if (!merged.issues.length) usage = await optionUsageWrites(p.accountId, fields, current.customFields, customFields, issues);
  }
  if (issues.length) throw invalid(issues);

  const at = new Date().toISOString();
  let next = appliedUpdate(current, input, customFields, at);
  const group = await ticketGroupChange(p.accountId, current, next, { group: newGroup });
  if (group.assigneeId) next = { ...next, assigneeId: group.assigneeId };
  const events = changeEvents(p.accountId, current, next, at, actorOf(p));
  if (!events.length) return { current, next: current, writes: [] };
  return {
    current,
    next,
    writes: [
      repo.replaceTicketWrite(next, current.version),
      ...repo.ticketWordWrites(current, next),
      ...usage,
      ...(await requesterChangeWrites(p.accountId, current, next)),
      ...group.writes,
      ...ticketEventWrites(events),
      ticketAudit(current, next, fields, contextOf(p, context)),
    ],
  };
}

/**
 * Apply the given fields to a ticket. Optimistic locking: if another writer
 * got there first, re-read and re-apply, so concurrent updates never lose one
 * another's changes.
 */
export function updateTicket(p: Principal, id: string, input: TicketEdit, context?: Partial<ChangeContext>): Promise<TicketRecord> {
  return retryOnConflict(async () => {
    const plan = await planTicketUpdate(p, id, input, context);
    if (plan.writes.length) await transactWrite(plan.writes);
    return plan.next;
  });
}

/**
 * The writes of changes another module's flow decides and commits in one
 * transaction (a merge's close, decisions §20): each `next` as given,
 * version-checked, with what any ticket change carries (word index, group
 * side, requester counts, audit), and their events recorded at once
 * (ticketEventWrites: the transaction names each change-tally shard once).
 * `extra` is what changed that is no field of the ticket (a merge target's
 * `mergedFrom`), in its ticket.updated (sent even when no field changed) and its audit.
 */
export async function ticketChangeWrites(
  p: Principal,
  changes: readonly { current: TicketRecord; next: TicketRecord; context: Partial<ChangeContext>; extra?: Record<string, { from: unknown; to: unknown }> }[],
): Promise<TxWrite[]> {
  const writes: TxWrite[] = [];
  const events: TicketEventDetail[] = [];
  for (const { current, next, context, extra = {} } of changes) {
    const [event, ...others] = changeEvents(p.accountId, current, next, next.updatedAt, actorOf(p));
    const fields = { ...(event?.event === 'ticket.updated' ? (event.data as { ticket: { updatedFields: object } }).ticket.updatedFields : {}), ...extra };
    const updated = { ...newTicketEvent(p.accountId, { event: 'ticket.updated', timestamp: next.updatedAt, data: { ticket: { id: next.id, updatedFields: fields } } }), actor: actorOf(p) };
    events.push(...(event?.event === 'ticket.updated' ? [updated, ...others] : [updated, ...(event ? [event] : []), ...others]));
    const audit = ticketAudit(current, next, new Map(), contextOf(p, context), { extra: Object.entries(extra).map(([field, c]) => ({ field, ...c })) });
    writes.push(
      repo.replaceTicketWrite(next, current.version),
      ...repo.ticketWordWrites(current, next),
      ...(await requesterChangeWrites(p.accountId, current, next)),
      ...(await ticketGroupChange(p.accountId, current, next)).writes,
      audit,
    );
  }
  return [...writes, ...ticketEventWrites(events)];
}

/** The outbox write of ticket.merged (decisions §20): the target (`id`) and the source, by the caller. */
export function ticketMergedWrite(p: Principal, targetId: string, sourceId: string, at: string): TxWrite {
  const event: TicketEventDetail = { ...newTicketEvent(p.accountId, { event: 'ticket.merged', timestamp: at, data: { ticket: { id: targetId, sourceId } } }), actor: actorOf(p) };
  return ticketEventWrites([event])[0];
}

/** Delete a ticket, releasing its option usage and requester counts, and record ticket.deleted (and its audit: `context`, by default the API). */
export function deleteTicket(p: Principal | SystemPrincipal, id: string, context?: Partial<ChangeContext>): Promise<void> {
  return retryOnConflict(async () => {
    const current = await getTicket(p, id);
    const fields = current.customFields.length ? await fieldMap(p.accountId, fieldsStampOf(p)) : new Map<string, FieldRecord>();
    const usage = await optionUsageWrites(p.accountId, fields, current.customFields, [], []);
    const event = newTicketEvent(p.accountId, { event: 'ticket.deleted', timestamp: new Date().toISOString(), data: { ticket: { id } } });
    const group = await ticketGroupChange(p.accountId, current, null);
    const at = event.timestamp;
    const gone = { ...current, updatedAt: at, version: current.version + 1 };
    await repo.deleteTicket(current, [
      ...usage,
      ...(await requesterChangeWrites(p.accountId, current, null)),
      ...group.writes,
      ...ticketEventWrites([event]),
      ticketAudit(current, gone, fields, contextOf(p, context), { deleted: true }),
      tombstoneWrite('ticket', p.accountId, id, at),
    ]);
  });
}

/** Commit a system change of one ticket (no principal): the ticket, its group side, its events and its audit (distribution), version-checked. */
async function applySystemChange(current: TicketRecord, next: TicketRecord, groupWrites: TxWrite[]): Promise<void> {
  const events = changeEvents(current.accountId, current, next, next.updatedAt);
  await transactWrite([
    repo.replaceTicketWrite(next, current.version),
    ...repo.ticketWordWrites(current, next),
    ...groupWrites,
    ...ticketEventWrites(events),
    ticketAudit(current, next, new Map(), { via: 'distribution', actor: SYSTEM_ACTOR }),
  ]);
}

/**
 * Backfill (decisions §9): give a waiting ticket (in a group, unassigned,
 * open) to the member distribution picks, with the events of a manual assignment.
 */
export function distributeWaiting(accountId: string, ticketId: string): Promise<'assigned' | 'none' | 'gone'> {
  return retryOnConflict(async () => {
    const current = await repo.getTicket(accountId, ticketId);
    if (!current?.groupId || current.assigneeId || !OPEN_STATUSES.includes(current.status)) return 'gone';
    let group: Awaited<ReturnType<typeof ticketGroupChange>>;
    try {
      group = await ticketGroupChange(accountId, current, current, { backfill: true });
    } catch (err) {
      if (err instanceof ValidationError) return 'gone'; // the group is being deleted
      throw err;
    }
    if (!group.assigneeId) return 'none';
    const next: TicketRecord = { ...current, assigneeId: group.assigneeId, updatedAt: new Date().toISOString(), version: current.version + 1 };
    await applySystemChange(current, next, group.writes);
    return 'assigned';
  });
}

/** A deleted group lets go of a ticket: groupId becomes null, the assignee stays (ticket.updated). Closed tickets too. */
export function detachGroup(accountId: string, ticketId: string, groupId: string): Promise<void> {
  return retryOnConflict(async () => {
    const current = await repo.getTicket(accountId, ticketId);
    if (!current || current.groupId !== groupId) return;
    const next: TicketRecord = { ...current, groupId: null, updatedAt: new Date().toISOString(), version: current.version + 1 };
    await applySystemChange(current, next, (await ticketGroupChange(accountId, current, next)).writes);
  });
}

/** Tickets of the change index, as the incremental export answers them (GET's shape). */
export const exportTickets = async (_accountId: string, items: Record<string, unknown>[]) => items.map(repo.ticketFromItem).map((t) => ({ id: t.id, updatedAt: t.updatedAt, object: toTicketDto(t) }));

const LIST = 'tickets';

/** One page of tickets; the cursor carries the first query's filters and sort. */
export async function listTickets(p: Principal, q: ListTicketsQuery) {
  let filter: TicketFilter;
  let startKey: Record<string, string> | undefined;
  if (q.after) {
    const c = await decodeCursor<TicketFilter>(q.after, LIST, p.accountId);
    filter = c.query;
    startKey = c.key;
  } else filter = { search: q.search, status: q.status, priority: q.priority, assigneeId: q.assignee_id, sortBy: q.sort_by, order: q.sort_order };
  const page = await repo.listTickets(p.accountId, filter, q.page_size, startKey);
  const next = page.nextKey ? await encodeCursor({ list: LIST, accountId: p.accountId, query: filter, key: page.nextKey }) : null;
  return { tickets: page.tickets, next };
}

/** Ids of an account's tickets that are not closed, a page at a time (the hourly automation pass). */
export const openTicketIdsPage = (accountId: string, limit: number, startKey?: Record<string, string>) => repo.openTicketIdsPage(accountId, limit, startKey);

/** For the SLA module (with findTicket): the account's open tickets, for recompute. */
export { listOpenTickets, countOpenTickets } from './repository.ts';
/** For admin reindex: the view index attributes of tickets written before the views. */
export { reindexTickets } from './repository.ts';
/** For the retention sweep (decisions §23): tickets closed before a day, a page at a time. */
export { closedTicketIdsBefore } from './repository.ts';
export type { TicketRecord } from './repository.ts';
/** For views (decisions §21): a page of the tickets a predicate accepts, through an index where the walk allows one. */
export { matchingPage, type TicketWalk } from './repository.ts';
