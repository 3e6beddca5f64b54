import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { hasDeskRole, type Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { ForbiddenError, InvalidCursorError, NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { tallyKeys, tallySettled } from '../tickets/change-tally.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import { listAllFields } from '../ticket-fields/api.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES } from '../ticket-fields/system-values.ts';
import { matchingPage, type TicketRecord, type TicketWalk } from '../tickets/service.ts';
import { sendRecount } from './background.ts';
import { checkConditions, matchesView, usesTime } from './conditions.ts';
import type { RecountMessage } from './counting.ts';
import { MAX_PERSONAL_VIEWS, MAX_SHARED_VIEWS } from './limits.ts';
import type { Condition, CreateViewInput, StoredCondition, UpdateViewInput, View, ViewCount, ViewTicketsQuery } from './model.ts';
import * as repo from './repository.ts';
import type { ViewRecord, ViewSet } from './repository.ts';

/**
 * Views (decisions §21): CRUD with the shared/personal rules and limits, the
 * counts (kept by counting.ts, read here at one instant with the change
 * tally) and a view's tickets, exact at the moment of the call.
 */

const toDto = (v: ViewRecord): View => ({
  id: v.id,
  title: v.title,
  conditions: { all: v.conditions.all.map(publicCondition), any: v.conditions.any.map(publicCondition) },
  sort: v.sort,
  personal: v.personal,
  ownerId: v.ownerId,
  createdAt: v.createdAt,
  updatedAt: v.updatedAt,
});
const publicCondition = ({ fieldId: _f, ...c }: StoredCondition): Condition => c;

/** What a view's audit lists (decisions §15), as the API answers the view; personal views are audited too. */
const AUDITED = ['title', 'conditions', 'sort', 'personal'] as const;
const viewAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}) =>
  auditWrite({ accountId: p.accountId, resource: { type: 'view', id }, actor: userActor(p), via: 'api', changes, ...opts });

const invalid = (issues: FieldIssue[]) => new ValidationError(`Invalid view: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);

/** Another user's personal view does not exist for the caller (404). */
const visible = (v: Pick<ViewRecord, 'personal' | 'ownerId'>, p: Principal) => !v.personal || v.ownerId === p.userId;

function mayChange(v: Pick<ViewRecord, 'personal'>, p: Principal) {
  if (!v.personal && !hasDeskRole(p.role, 'admin')) throw new ForbiddenError('Only admins create, change or delete shared views');
}

async function storedConditions(accountId: string, conditions: { all: Condition[]; any: Condition[] }) {
  const custom = [...conditions.all, ...conditions.any].some((c) => c.field.startsWith('customFields.'));
  const fields = custom ? new Map((await listAllFields(accountId)).map((f) => [f.fieldKey, f])) : new Map();
  const { issues, stored } = checkConditions(conditions, fields);
  if (issues.length) throw invalid(issues);
  return stored;
}

const nextSet = (set: ViewSet, views: ViewRecord[], counting: boolean): ViewSet => ({
  version: set.version + 1,
  timeViews: views.filter((v) => usesTime(v.conditions)).length,
  counting: counting || set.counting,
});

/** Queue the background count of the account's views at this set version (best effort: the scheduled pass picks up a count owed). */
async function queueCount(queueUrl: string, msg: RecountMessage): Promise<void> {
  try {
    await sendRecount(queueUrl, msg);
  } catch (err) {
    logger.warn('views: could not queue the background count; the scheduled pass will run it', { accountId: msg.accountId, err });
  }
}

export async function listViews(p: Principal): Promise<View[]> {
  const { views } = await repo.loadViews(p.accountId);
  return views.filter((v) => visible(v, p)).map(toDto);
}

async function findVisible(p: Principal, id: string, consistent = false) {
  const loaded = await repo.loadViews(p.accountId, { consistent });
  const view = loaded.views.find((v) => v.id === id);
  if (!view || !visible(view, p)) throw new NotFoundError('View');
  return { ...loaded, view };
}

export const getView = async (p: Principal, id: string): Promise<View> => toDto((await findVisible(p, id)).view);

export async function createView(p: Principal, input: CreateViewInput, queueUrl: string, opts: CreateAnswer<View> = {}): Promise<View> {
  mayChange(input, p);
  const conditions = await storedConditions(p.accountId, input.conditions);
  const { record, set } = await retryOnConflict(async () => {
    const { set, views } = await repo.loadViews(p.accountId, { consistent: true });
    if (input.personal && views.filter((v) => v.personal && v.ownerId === p.userId).length >= MAX_PERSONAL_VIEWS)
      throw invalid([{ field: 'personal', message: `a user has at most ${MAX_PERSONAL_VIEWS} personal views` }]);
    if (!input.personal && views.filter((v) => !v.personal).length >= MAX_SHARED_VIEWS) throw invalid([{ field: 'body', message: `an account has at most ${MAX_SHARED_VIEWS} shared views` }]);
    const now = new Date().toISOString();
    const record: ViewRecord = {
      id: newId('view'),
      accountId: p.accountId,
      title: input.title,
      conditions,
      sort: input.sort,
      personal: input.personal,
      ownerId: input.personal ? p.userId : null,
      rev: 1,
      count: 0,
      ready: false,
      createdAt: now,
      updatedAt: now,
    };
    const next = nextSet(set, [...views, record], true);
    // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer
    // answers this view instead of making a second one. A count not queued below is owed, and the time pass queues it.
    await repo.commitViews(p.accountId, next, [repo.putViewWrite(record), viewAudit(p, record.id, diffFields(null, toDto(record), AUDITED), { at: now }), ...createAnswerWrites(opts, toDto(record))]);
    return { record, set: next };
  }, isRetryableConflict);
  await queueCount(queueUrl, { accountId: p.accountId, version: set.version });
  return toDto(record);
}

/** Only the given fields change; new conditions start a new count (`rev`), counted in the background. */
export async function updateView(p: Principal, id: string, input: UpdateViewInput, queueUrl: string): Promise<View> {
  const conditions = input.conditions && (await storedConditions(p.accountId, input.conditions));
  const { record, set, recount } = await retryOnConflict(async () => {
    const { set, views, view } = await findVisible(p, id, true);
    mayChange(view, p);
    if (input.personal !== undefined && input.personal !== view.personal) throw invalid([{ field: 'personal', message: 'a view cannot change between personal and shared; create a new one' }]);
    const recount = conditions !== undefined && JSON.stringify(conditions) !== JSON.stringify(view.conditions);
    const record: ViewRecord = {
      ...view,
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.sort !== undefined ? { sort: input.sort } : {}),
      ...(recount ? { conditions: conditions!, rev: view.rev + 1, count: 0, ready: false } : {}),
      updatedAt: new Date().toISOString(),
    };
    const next = nextSet(
      set,
      views.map((v) => (v.id === id ? record : v)),
      recount,
    );
    // New conditions replace the view whole (a new revision, its count from 0); otherwise only the changed fields are set,
    // so a count the consumer moved since the read is kept.
    // The same values given again still write but record no audit: nothing changed.
    const changes = diffFields(toDto(view), toDto(record), AUDITED);
    await repo.commitViews(p.accountId, next, [
      recount ? repo.putViewWrite(record) : repo.updateViewWrite(view, record),
      ...(changes.length ? [viewAudit(p, id, changes, { at: record.updatedAt })] : []),
    ]);
    return { record, set: next, recount };
  });
  if (recount) await queueCount(queueUrl, { accountId: p.accountId, version: set.version });
  return toDto(record);
}

export async function deleteView(p: Principal, id: string): Promise<void> {
  await retryOnConflict(async () => {
    const { set, views, view } = await findVisible(p, id, true);
    mayChange(view, p);
    await repo.commitViews(
      p.accountId,
      nextSet(
        set,
        views.filter((v) => v.id !== id),
        false,
      ),
      [repo.deleteViewWrite(p.accountId, id), viewAudit(p, id, [], { deleted: true })],
    );
  });
}

/**
 * Counts of views by id, read at one instant with the account's change tally
 * (decisions §21): exact, `fresh` while every ticket change is applied and the
 * view's background count is done. Ids the caller cannot see are left out.
 */
export async function viewCounts(p: Principal, ids: readonly string[]): Promise<ViewCount[]> {
  const read = await repo.readCounts(p.accountId, ids, tallyKeys(p.accountId));
  const settled = read.together && tallySettled(read.extra);
  const byId = new Map(read.views.filter((v) => visible(v, p)).map((v) => [v.id, v]));
  return ids.flatMap((id) => {
    const v = byId.get(id);
    return v ? [{ viewId: id, value: Math.max(0, v.count), fresh: v.ready && settled }] : [];
  });
}

export async function viewCount(p: Principal, id: string): Promise<ViewCount> {
  const [count] = await viewCounts(p, [id]);
  if (!count) throw new NotFoundError('View');
  return count;
}

const SORTS = { createdAt: 'created_at', updatedAt: 'updated_at', status: 'status', priority: 'priority' } as const;

/** The set of values an `all` condition on an enum field allows, or undefined when it says nothing of it. */
function allowed(conditions: readonly StoredCondition[], field: string, every: readonly string[]): string[] | undefined {
  let set: string[] | undefined;
  for (const c of conditions) {
    if (c.field !== field) continue;
    const values = (Array.isArray(c.value) ? c.value : [c.value]).map(String);
    const these = c.operator === 'is' || c.operator === 'in' ? values : c.operator === 'isNot' || c.operator === 'notIn' ? every.filter((v) => !values.includes(v)) : [...every];
    set = (set ?? [...every]).filter((v) => these.includes(v));
  }
  return set;
}

/**
 * How a view's tickets are read (docs/decisions.md "Views"): status and
 * priority sets and an assignee (the `all` conditions that pin them) read the
 * keys-only view indexes when the sort is by creation or update; every other
 * condition filters what those (or the sorted list) yield.
 */
export function walkOf(v: Pick<ViewRecord, 'conditions' | 'sort'>): TicketWalk {
  const all = v.conditions.all;
  const assignee = all.find((c) => c.field === 'assigneeId' && c.operator === 'is' && typeof c.value === 'string');
  return {
    sortBy: SORTS[v.sort.by],
    order: v.sort.order,
    statuses: allowed(all, 'status', TICKET_STATUSES),
    priorities: allowed(all, 'priority', TICKET_PRIORITIES),
    assigneeId: assignee ? String(assignee.value) : undefined,
  };
}

const LIST = 'views';

/** A page of a view's tickets in its sort, judged at the moment of the call; the cursor names the view. */
export async function viewTickets(p: Principal, id: string, q: ViewTicketsQuery): Promise<{ tickets: TicketRecord[]; next: string | null }> {
  const { view } = await findVisible(p, id);
  let key: Record<string, string> | undefined;
  if (q.after) {
    const c = await decodeCursor<{ viewId: string }>(q.after, LIST, p.accountId);
    if (c.query.viewId !== id) throw new InvalidCursorError('The cursor belongs to another view');
    key = c.key;
  }
  const now = Date.now();
  const page = await matchingPage(p.accountId, walkOf(view), (t) => matchesView(t, view.conditions, now), q.page_size, key);
  const next = page.nextKey ? await encodeCursor({ list: LIST, accountId: p.accountId, query: { viewId: id }, key: page.nextKey as Record<string, string> }) : null;
  return { tickets: page.tickets, next };
}
