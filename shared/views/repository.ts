import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactGetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { bindEntity, conditions } from '../db/entity.ts';
import { viewEntities } from '../db/entities/views.ts';
import { batchGet, queryAll, type Key } from '../db/query.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import type { StoredCondition, ViewSort } from './model.ts';

/** A view as stored: the resource, its live count and the revision the count belongs to. */
export interface ViewRecord {
  id: string;
  accountId: string;
  title: string;
  conditions: { all: StoredCondition[]; any: StoredCondition[] };
  sort: ViewSort;
  personal: boolean;
  ownerId: string | null;
  /** Moved by every edit: a count and the memberships of an older revision no longer count. */
  rev: number;
  count: number;
  /** The background count of this revision is done. */
  ready: boolean;
  createdAt: string;
  updatedAt: string;
}

/** The account's views as a whole: a version every view write bumps and every count change checks. */
export interface ViewSet {
  version: number;
  /** Views with hoursSince* conditions; > 0 lists the account for the scheduled pass (gsi4). */
  timeViews: number;
  /** A background count is owed (a view created or edited): the account stays listed for the scheduled pass until one ends. */
  counting: boolean;
}

const sets = bindEntity<ViewSet & { accountId: string }>(viewEntities.viewSet, {
  fields: ['accountId', 'version', 'timeViews', 'counting'],
  keyValues: (s) => ({ timeAccount: s.timeViews > 0 || s.counting ? s.accountId : null }),
});

const views = bindEntity<ViewRecord>(viewEntities.view, {
  fields: ['id', 'accountId', 'title', 'conditions', 'sort', 'personal', 'ownerId', 'rev', 'count', 'ready', 'createdAt', 'updatedAt'],
  normalize: (v) => ({ ...v, count: Number(v.count ?? 0), rev: Number(v.rev ?? 1), ready: v.ready === true }),
});

/** A ticket's memberships: the `<viewId>:<rev>` keys it is counted in. */
export interface Membership {
  accountId: string;
  ticketId: string;
  keys: string[];
  rev: number;
}

/** Event marks and empty memberships outlive any redelivery (SQS keeps messages 14 days). */
const KEEP_SECONDS = 14 * 24 * 60 * 60;

const memberships = bindEntity<Membership>(viewEntities.viewMembership, {
  fields: ['accountId', 'ticketId', 'keys', 'rev'],
  normalize: (m) => ({ ...m, keys: m.keys ?? [], rev: Number(m.rev ?? 0) }),
  extra: (m) => (m.keys.length ? {} : { [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + KEEP_SECONDS }),
});

const marks = bindEntity<{ accountId: string; eventId: string; at: string }>(viewEntities.viewEventMark, {
  fields: ['at'],
  extra: (r) => ({ [TTL_ATTRIBUTE]: Math.floor(Date.parse(r.at) / 1000) + KEEP_SECONDS }),
});

/** Thrown when the account's views changed since they were read; the caller re-reads. */
export class StaleViewsError extends ConflictError {}
/** Thrown when a ticket's memberships changed since they were read. */
export class StaleMembershipError extends ConflictError {}
/** Thrown when the view counts already applied this event (a redelivery). */
export class AlreadyAppliedError extends Error {}

/** The set and every view of an account: one Query (the set item shares the prefix). */
export async function loadViews(accountId: string, opts: { consistent?: boolean } = {}): Promise<{ set: ViewSet; views: ViewRecord[] }> {
  const items = await queryAll<Record<string, unknown>>({ ...views.query('withSet', { accountId }, { skBeginsWith: sets.key({ accountId }).sk }), consistent: opts.consistent });
  const setItem = items.find((i) => i.type === viewEntities.viewSet.type);
  const stored = setItem && sets.fromItem(setItem);
  return {
    set: stored ? { version: Number(stored.version), timeViews: Number(stored.timeViews ?? 0), counting: stored.counting === true } : { version: 0, timeViews: 0, counting: false },
    views: items.filter((i) => i.type === viewEntities.view.type).map(views.fromItem),
  };
}

export const putViewWrite = (v: ViewRecord): TxWrite => views.put(v);
/** An edit sets only the fields that differ: a count moved by the consumer since the read is kept (unless the edit resets it). */
export const updateViewWrite = (current: ViewRecord, next: ViewRecord): TxWrite => views.update(current, next);
export const deleteViewWrite = (accountId: string, id: string): TxWrite => views.delete({ accountId, id });

/** Commit view writes with the next version of the set, if the set is still at the version that was read. */
export async function commitViews(accountId: string, next: ViewSet, writes: TxWrite[]): Promise<void> {
  await transactWrite([setWrite(accountId, next), ...writes]);
}

const stale = () => new StaleViewsError('The views were changed concurrently; retry');

function setWrite(accountId: string, next: ViewSet): TxWrite {
  const expected = next.version - 1;
  return sets.put({ accountId, ...next }, expected === 0 ? conditions.absent(stale) : conditions.version('version', expected, stale));
}

/** Proves, in a count change's transaction, that the views are still those judged against. */
export const viewsUnchangedCheck = (accountId: string, version: number): TxWrite =>
  version === 0 ? sets.check({ accountId }, conditions.absent(stale)) : sets.check({ accountId }, conditions.version('version', version, stale));

/** Move a view's count (its item stays as written otherwise). */
export const countWrite = (accountId: string, viewId: string, delta: number): TxWrite => views.updateAttributes({ accountId, id: viewId }, { add: { count: delta } });

/** Mark a view's background count done, if the view is still at that revision. */
export const readyWrite = (accountId: string, viewId: string, rev: number): TxWrite =>
  views.updateAttributes({ accountId, id: viewId }, { set: { ready: true } }, { expr: '#rev = :rev', names: { '#rev': 'rev' }, values: { ':rev': rev } });

export const getMembership = (accountId: string, ticketId: string) => memberships.get({ accountId, ticketId }, { consistent: true });
export const getMemberships = (accountId: string, ticketIds: readonly string[]) =>
  memberships.getMany(
    ticketIds.map((ticketId) => ({ accountId, ticketId })),
    { consistent: true },
  );

/**
 * Replace a ticket's memberships if they are still at the revision read
 * (absent: 0). Never deleted, so a revision never comes back: an empty one
 * (a ticket in no view, or deleted) stays, and expires after KEEP_SECONDS.
 */
export function membershipWrite(m: Membership, readRev: number): TxWrite {
  const staleMember = () => new StaleMembershipError('The ticket was counted concurrently');
  return memberships.put({ ...m, rev: readRev + 1 }, readRev === 0 ? conditions.absent(staleMember) : conditions.version('rev', readRev, staleMember));
}

/** Records, in the count change's own transaction, that an event has been applied; a second application fails. */
export const eventMarkWrite = (accountId: string, eventId: string): TxWrite =>
  marks.put(
    { accountId, eventId, at: new Date().toISOString() },
    conditions.absent(() => new AlreadyAppliedError('The view counts already applied this event')),
  );

export const hasEventMark = async (accountId: string, eventId: string): Promise<boolean> => (await marks.get({ accountId, eventId }, { projection: ['pk'] })) !== null;

export { transactWrite };

const COUNT_FIELDS = ['type', 'id', 'personal', 'ownerId', 'count', 'ready', 'made', 'applied'];
const COUNT_PROJECTION = { ProjectionExpression: COUNT_FIELDS.map((f) => `#${f}`).join(', '), ExpressionAttributeNames: Object.fromEntries(COUNT_FIELDS.map((f) => [`#${f}`, f])) };
/** Tries of the read at one instant while a transaction holds one of its items; then the counts are read without it. */
const TOGETHER_ATTEMPTS = 4;

/** The items as they all stood at one instant (TransactGetItems, at most 100 keys), or null while a transaction keeps holding one of them. */
async function readTogether(keys: readonly Key[]): Promise<Record<string, unknown>[] | null> {
  for (let attempt = 0; attempt < TOGETHER_ATTEMPTS; attempt++) {
    if (attempt) await sleep(Math.random() * 10 * 2 ** attempt);
    try {
      const out = await ddb.send(new TransactGetCommand({ TransactItems: keys.map((Key) => ({ Get: { TableName: tableName(), Key, ...COUNT_PROJECTION } })) }));
      return (out.Responses ?? []).flatMap((r) => (r.Item ? [r.Item] : []));
    } catch (err) {
      if (!(err instanceof TransactionCanceledException) || !err.CancellationReasons?.some((r) => r.Code === 'TransactionConflict')) throw err;
    }
  }
  return null;
}

/**
 * The counts of some views and the items beside them (the change tally), read
 * at one instant in one TransactGetItems of at most 100 keys, only what a count
 * needs: the consumer moves a count and the tally's `applied` in one
 * transaction, so a count is never read from before a change whose mark is
 * read (two moments, as an eventually consistent BatchGetItem could answer,
 * would say fresh one change early). `together` false: the items were held by
 * writes on every try and were read one by one (strongly consistent), so
 * nothing can be said fresh.
 */
export async function readCounts(
  accountId: string,
  ids: readonly string[],
  extra: readonly Key[],
): Promise<{ views: Pick<ViewRecord, 'id' | 'personal' | 'ownerId' | 'count' | 'ready'>[]; extra: Record<string, unknown>[]; together: boolean }> {
  const keys = [...ids.map((id) => views.key({ accountId, id })), ...extra];
  const atOnce = await readTogether(keys);
  const found = atOnce ?? (await batchGet(keys, { consistent: true }));
  const viewItems = found.filter((i) => i.type === viewEntities.view.type);
  return {
    views: viewItems.map((i) => ({ id: String(i.id), personal: i.personal === true, ownerId: (i.ownerId as string | null) ?? null, count: Number(i.count ?? 0), ready: i.ready === true })),
    extra: found.filter((i) => i.type !== viewEntities.view.type),
    together: atOnce !== null,
  };
}

/** Accounts with at least one view with time conditions (gsi4; never a Scan). */
export async function accountsWithTimeViews(): Promise<string[]> {
  const items = await queryAll<Record<string, unknown>>(sets.query('timeAccounts', {}));
  return items.map((i) => sets.fromItem(i).accountId);
}

/**
 * The end of a background count: every view of that set version not yet
 * `ready` becomes so (each only at the revision counted), and the account
 * leaves the pass's list unless a later write owes another count.
 */
export async function finishCount(accountId: string, loaded: { set: ViewSet; views: ViewRecord[] }, version: number): Promise<void> {
  const ignoreStale = (err: unknown) => {
    if ((err as Error).name !== 'ConditionalCheckFailedException' && !(err instanceof ConflictError)) throw err;
  };
  await Promise.all(loaded.views.filter((v) => !v.ready).map((v) => writeNow(readyWrite(accountId, v.id, v.rev)).catch(ignoreStale)));
  if (loaded.set.counting) {
    const next = { accountId, ...loaded.set, counting: false };
    await writeNow(sets.update({ accountId, ...loaded.set }, next, conditions.version('version', version, stale))).catch(ignoreStale);
  }
}
