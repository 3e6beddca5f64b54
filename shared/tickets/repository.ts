import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { bindEntity, conditions } from '../db/entity.ts';
import { ticketEntities } from '../db/entities/tickets.ts';
import { countMatches, mergedPage, queryAll, queryPage, READ_BUDGET, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES } from '../ticket-fields/system-values.ts';
import type { Ticket } from './model.ts';
import { historyShard } from '../db/shard.ts';
import { indexWrites, searchIndex, type KeyedWords, type Searchable } from '../search/word-index.ts';
import { fold, recordWords, searchFilter, searchTerms, searchText } from '../search/words.ts';

/** A ticket as stored: the resource plus its tenant and version. */
export interface TicketRecord extends Ticket {
  accountId: string;
  version: number;
}

const rank = (list: readonly string[], v: string) => String(list.indexOf(v));

/** Sort keys: updated (gsi1), status in workflow order (gsi2), priority low..urgent (gsi3); the time-ordered id breaks ties. */
/**
 * Most words of a ticket the word index holds (decisions §16): its id, the
 * requester's email and name and its subject first, then its tags. The bound
 * keeps a change's transaction under DynamoDB's 100 items however many tags a
 * ticket has (a change rewrites at most this many word items twice); a word
 * past it is still matched by the filtered list walk (`searchText`).
 */
export const TICKET_WORD_CAP = 32;

function wordsOf(t: TicketRecord): string[] {
  const primary = recordWords({ names: [t.subject, t.requesterName], addresses: [t.requesterEmail, t.id] });
  const all = recordWords({ names: [t.subject, t.requesterName], addresses: [t.requesterEmail, t.id, ...t.tags] });
  if (all.length <= TICKET_WORD_CAP) return all;
  return [...primary, ...all.filter((w) => !primary.includes(w))].slice(0, TICKET_WORD_CAP);
}

/**
 * A ticket's id as words: the whole id and its time-ordered part (`tkt_01m8...` and `01m8...`, folded). They have no
 * word items (two of a create's seven, issue 42): the ticket's own key starts with the id, so a term that may start
 * one reads the tickets by key instead (`byIdPrefix`).
 */
const ID_PREFIX = 'tkt_';
const idWords = (id: string) => [fold(id), fold(id).slice(ID_PREFIX.length)];

/** What the word index holds of a ticket: its words, its sort positions besides id order, and the filters a search combines with. */
const searchable = (t: TicketRecord): Searchable => ({
  accountId: t.accountId,
  id: t.id,
  words: wordsOf(t),
  unindexed: idWords(t.id),
  sort: { status: `${rank(TICKET_STATUSES, t.status)}#${t.id}`, priority: `${rank(TICKET_PRIORITIES, t.priority)}#${t.id}` },
  filters: { status: t.status, priority: t.priority, assigneeId: t.assigneeId },
});

const tickets = bindEntity<TicketRecord>(ticketEntities.ticket, {
  fields: [
    'id',
    'accountId',
    'subject',
    'status',
    'priority',
    'type',
    'assigneeId',
    'requesterEmail',
    'requesterName',
    'groupId',
    'tags',
    'customFields',
    'mergedInto',
    'satisfactionRating',
    'createdAt',
    'updatedAt',
    'version',
  ],
  renames: { type: 'ticketType' },
  keyValues: (t) => ({ statusRank: rank(TICKET_STATUSES, t.status), priorityRank: rank(TICKET_PRIORITIES, t.priority), changeShard: historyShard(t.id) }),
  normalize: (r) => ({ ...r, tags: r.tags ?? [], customFields: r.customFields ?? [], mergedInto: r.mergedInto ?? null, satisfactionRating: r.satisfactionRating ?? null }),
  // Every word, uncapped, for a search run as a list filter (sort_by=updated_at, or more matches than the index ranks).
  extra: (t) => ({ searchText: searchText(recordWords({ names: [t.subject, t.requesterName], addresses: [t.requesterEmail, t.id, ...t.tags] })) }),
});

/** Crockford base32 as ids fold it; a ULID's first character is 0-7 (48 bits of time in 50). */
const ULID_TAIL = /^[0-9a-hjkmnp-tv-z]{0,26}$/;

/** The start of the ticket ids a term may begin (as stored: upper case), or null when it cannot start an id word. */
function idKeyPrefix(term: string): string | null {
  if (ID_PREFIX.startsWith(term)) return ID_PREFIX;
  const tail = term.startsWith(ID_PREFIX) ? term.slice(ID_PREFIX.length) : /^[0-7]/.test(term) ? term : null;
  return tail !== null && ULID_TAIL.test(tail) ? ID_PREFIX + tail.toUpperCase() : null;
}

/** What a ticket search reads by key: the tickets whose id a term may start, with what a match checks (decisions §16). */
const byIdPrefix: KeyedWords = {
  mayMatch: (term) => idKeyPrefix(term) !== null,
  async read(accountId, term, max) {
    const q = tickets.query('byCreated', { accountId }, { skBeginsWith: `TICKET#${idKeyPrefix(term)}` });
    const attrs = ['id', 'accountId', 'subject', 'status', 'priority', 'assigneeId', 'requesterEmail', 'requesterName', 'tags'];
    const items = await queryAll<Record<string, unknown>>({
      ...q,
      names: { ...q.names, ...Object.fromEntries(attrs.map((a) => [`#${a}`, a])) },
      projection: attrs.map((a) => `#${a}`).join(', '),
      until: (soFar) => soFar.length > max,
    });
    return items.map((i) => searchable(tickets.fromItem(i)));
  },
};

/** The word-index writes of a ticket change (create: `before` null; delete: `after` null); none when its words, sort and filters stay. */
export const ticketWordWrites = (before: TicketRecord | null, after: TicketRecord | null): TxWrite[] => indexWrites('ticket', before && searchable(before), after && searchable(after));

export async function getTicket(accountId: string, id: string, opts: { consistent?: boolean } = {}): Promise<TicketRecord | null> {
  return tickets.get({ accountId, id }, opts);
}

/** Create a ticket with the writes that belong to it (option usage, outbox events) in one transaction. */
export async function createTicket(t: TicketRecord, related: TxWrite[]): Promise<void> {
  await transactWrite([tickets.put(t, conditions.absent()), ...ticketWordWrites(null, t), ...related]);
}

/** Thrown when the ticket changed since it was read; the service re-reads and re-applies. */
export class StaleTicketError extends ConflictError {}

const unchanged = (expectedVersion: number) => conditions.version('version', expectedVersion, () => new StaleTicketError('The ticket was changed concurrently'));

/** The write that replaces a ticket if it still has the version that was read (optimistic locking). */
export function replaceTicketWrite(next: TicketRecord, expectedVersion: number): TxWrite {
  return tickets.put(next, unchanged(expectedVersion));
}

/** Proves, inside another write's transaction, that the ticket exists (NotFoundError if not). */
export function ticketPresentCheck(accountId: string, id: string): TxWrite {
  return tickets.check(
    { accountId, id },
    conditions.present(() => new NotFoundError('Ticket')),
  );
}

/** Proves, inside another write's transaction, that the ticket is unchanged since it was read. */
export function ticketUnchangedCheck(t: TicketRecord): TxWrite {
  return tickets.check(t, unchanged(t.version));
}

export async function deleteTicket(t: TicketRecord, related: TxWrite[]): Promise<void> {
  await transactWrite([tickets.delete(t, unchanged(t.version)), ...ticketWordWrites(t, null), ...related]);
}

export interface TicketFilter {
  search?: string;
  status?: string;
  priority?: string;
  assigneeId?: string;
  sortBy: 'created_at' | 'updated_at' | 'status' | 'priority';
  order: 'asc' | 'desc';
}

const SORT_PATTERN = { created_at: 'byCreated', updated_at: 'byUpdated', status: 'byStatus', priority: 'byPriority' } as const;

/** The partitions a view filter spans (decisions §13), or null when the filter is not a view (it is read as a bounded filter). */
function viewPartitions(accountId: string, f: TicketFilter): { pattern: string; sortKey: string; partitions: Record<string, string>[] } | null {
  if (f.sortBy !== 'created_at' && f.sortBy !== 'updated_at') return null;
  const updated = f.sortBy === 'updated_at';
  const statuses = f.status ? [f.status] : [...TICKET_STATUSES];
  if (f.assigneeId) {
    if (f.priority) return null;
    return {
      pattern: updated ? 'byAssigneeStatusUpdated' : 'byAssigneeStatus',
      sortKey: updated ? 'gsi8sk' : 'gsi7sk',
      partitions: statuses.map((status) => ({ accountId, assigneeId: f.assigneeId!, status })),
    };
  }
  if (!f.status && !f.priority) return null;
  const priorities = f.priority ? [f.priority] : [...TICKET_PRIORITIES];
  return {
    pattern: updated ? 'byStatusPriorityUpdated' : 'byStatusPriority',
    sortKey: updated ? 'gsi6sk' : 'gsi5sk',
    partitions: statuses.flatMap((status) => priorities.map((priority) => ({ accountId, status, priority }))),
  };
}

const matches = (t: TicketRecord, f: TicketFilter) => (!f.status || t.status === f.status) && (!f.priority || t.priority === f.priority) && (!f.assigneeId || t.assigneeId === f.assigneeId);

/**
 * A page of tickets. A view filter (status, priority, assignee, status with
 * either) reads its keys-only view partitions merged in the requested order,
 * then the page's tickets by key: work in proportion to the page. Other
 * filters walk the sorted list: base table for creation order (ids are
 * time-ordered), gsi1..gsi3 for the other sorts, bounded per request.
 */
export async function listTickets(accountId: string, f: TicketFilter, limit: number, startKey?: Key) {
  const terms = f.search ? searchTerms(f.search) : [];
  if (terms.length) {
    if (f.sortBy !== 'updated_at' && (!startKey || 'search' in startKey)) {
      const page = await searchPage(accountId, f, terms, limit, startKey?.search);
      if (page) return page;
    }
    return filteredPage(accountId, f, limit, startKey && 'search' in startKey ? undefined : startKey, terms);
  }
  const view = viewPartitions(accountId, f);
  if (view && (!startKey || 'view' in startKey)) {
    const page = await viewPage(accountId, f, view, limit, startKey?.view).catch((err: unknown) => {
      // A stage still rolling the view indexes out (infra/config.ts viewIndexes) reads as before until they exist.
      if ((err as Error).name === 'ValidationException' && /specified index/i.test((err as Error).message)) return null;
      throw err;
    });
    if (page) return page;
  }
  return filteredPage(accountId, f, limit, startKey && 'view' in startKey ? undefined : startKey);
}

/** One page of a view: its partitions merged in order (keys only), then the page's tickets by key. */
async function viewPage(accountId: string, f: TicketFilter, view: NonNullable<ReturnType<typeof viewPartitions>>, limit: number, after: string | undefined) {
  const forward = f.order === 'asc';
  const position = after === undefined ? {} : forward ? { skAfter: after } : { skBefore: after };
  const page = await mergedPage(
    view.partitions.map((v) => tickets.query(view.pattern, v, { forward, ...position })),
    view.sortKey,
    limit,
  );
  const idOf = (i: Record<string, unknown>) => String(i.sk).slice('TICKET#'.length);
  const found = new Map((await tickets.getMany(page.items.map((i) => ({ accountId, id: idOf(i) })))).map((t) => [t.id, t]));
  // The index is eventually consistent: a ticket changed or deleted since is left out rather than shown where it no longer belongs.
  const list = page.items.flatMap((i) => found.get(idOf(i)) ?? []).filter((t) => matches(t, f));
  return { tickets: list, nextKey: page.next === undefined ? undefined : { view: page.next } };
}

/**
 * A page of a search through the word index (decisions §16): the matches of
 * the longest term, checked against the other terms and the filters on the
 * index items themselves, sorted by id (creation), status or priority; then
 * the page's tickets by key. Reads the term's index items (small, at most
 * twice SEARCH_CAP) and the page, whatever the account holds. Null when more
 * tickets match than the index ranks: the caller walks the list instead.
 */
async function searchPage(accountId: string, f: TicketFilter, terms: string[], limit: number, after: string | undefined) {
  const forward = f.order === 'asc';
  const sortBy = f.sortBy === 'created_at' ? 'created' : f.sortBy;
  const hits = await searchIndex(accountId, 'ticket', terms, { sortBy, forward, filters: { status: f.status, priority: f.priority, assigneeId: f.assigneeId }, keyed: byIdPrefix });
  if (hits.truncated) return null;
  const from = after === undefined ? 0 : hits.positions.findIndex((p) => (forward ? p > after : p < after));
  const start = from < 0 ? hits.ids.length : from;
  const ids = hits.ids.slice(start, start + limit);
  const found = new Map((await tickets.getMany(ids.map((id) => ({ accountId, id })))).map((t) => [t.id, t]));
  // The index follows its ticket in the same transaction; a ticket deleted since is simply left out.
  const list = ids.flatMap((id) => found.get(id) ?? []);
  const more = start + limit < hits.ids.length;
  return { tickets: list, nextKey: more ? { search: hits.positions[start + ids.length - 1] } : undefined };
}

/** A list no view serves: the sorted list walked with a filter (and a search's terms), bounded per request (READ_BUDGET). */
async function filteredPage(accountId: string, f: TicketFilter, limit: number, startKey?: Key, terms: string[] = []) {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const filters: string[] = [];
  const add = (attr: string, v: string | undefined) => {
    if (v === undefined) return;
    names[`#${attr}`] = attr;
    values[`:${attr}`] = v;
    filters.push(`#${attr} = :${attr}`);
  };
  add('status', f.status);
  add('priority', f.priority);
  add('assigneeId', f.assigneeId);
  if (terms.length) {
    const words = searchFilter(terms);
    filters.push(`(${words.expr})`);
    Object.assign(names, words.names);
    Object.assign(values, words.values);
  }
  const filter = filters.length ? { expr: filters.join(' AND '), names, values } : undefined;
  const page = await queryPage<Record<string, unknown>>({ ...tickets.query(SORT_PATTERN[f.sortBy], { accountId }, { forward: f.order === 'asc', filter }), limit, startKey });
  return { tickets: page.items.map(tickets.fromItem), nextKey: page.nextKey };
}

/** Status ranks below `status`'s: for `closed`, tickets not closed; for `resolved`, new, open and pending (status rank leads the key). */
const statusBelow = (accountId: string, status: 'closed' | 'resolved') => tickets.query('byStatus', { accountId }, { skBefore: rank(TICKET_STATUSES, status) });

/** One page of ids of an account's tickets that are not closed: gsi2 sorts by status rank, closed last. */
export async function openTicketIdsPage(accountId: string, limit: number, startKey?: Key): Promise<{ ids: string[]; nextKey?: Key }> {
  const q = statusBelow(accountId, 'closed');
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: q.index,
      KeyConditionExpression: q.keyCondition,
      ExpressionAttributeValues: q.values,
      ProjectionExpression: 'id',
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { ids: (out.Items ?? []).map((i) => i.id as string), nextKey: out.LastEvaluatedKey as Key | undefined };
}

/** A page of the account's open tickets (new, open, pending), by status then age: a Query on gsi2, never a Scan. */
export async function listOpenTickets(accountId: string, limit: number, startKey?: Key) {
  const page = await queryPage<Record<string, unknown>>({ ...statusBelow(accountId, 'resolved'), limit, startKey });
  return { tickets: page.items.map(tickets.fromItem), nextKey: page.nextKey };
}

/**
 * Ids of up to `limit` tickets closed before `before` (ISO 8601), oldest
 * change first: the closed partitions of the status view sorted by
 * `updatedAt` (a closed ticket changes no more, so its `updatedAt` is when
 * it closed), merged, keys only. The retention sweep (decisions §23) reads
 * it; its work is the page, whatever the account holds.
 */
export async function closedTicketIdsBefore(accountId: string, before: string, limit: number): Promise<string[]> {
  const page = await mergedPage(
    TICKET_PRIORITIES.map((priority) => tickets.query('byStatusPriorityUpdated', { accountId, status: 'closed', priority }, { skBefore: before })),
    'gsi6sk',
    limit,
  );
  return page.items.map((i) => String(i.sk).slice('TICKET#'.length));
}

/** How many open tickets the account has (counted on gsi2, up to `cap`). */
export async function countOpenTickets(accountId: string, cap: number): Promise<number> {
  return countMatches(statusBelow(accountId, 'resolved'), cap);
}

/**
 * Rewrite the index attributes of a page of tickets written before the views
 * existed (admin reindex), each only if the ticket is unchanged (a changed one
 * was indexed by its change). Idempotent; an UpdateItem each, no event.
 */
export async function reindexTickets(accountId: string, limit: number, startKey?: Key): Promise<{ records: number; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...tickets.query('byCreated', { accountId }), limit, startKey });
  await Promise.all(
    page.items.map(tickets.fromItem).map((t) =>
      transactWrite([tickets.update(t, t, unchanged(t.version)), ...ticketWordWrites(null, t)]).catch((err) => {
        if (!(err instanceof StaleTicketError)) throw err;
      }),
    ),
  );
  return { records: page.items.length, nextKey: page.nextKey };
}

/** A ticket from an item of its indexes (the change index of the incremental export projects whole items). */
export const ticketFromItem = (item: Record<string, unknown>): TicketRecord => tickets.fromItem(item);

/** What a view's ticket list may read through an index (decisions §21): sets of statuses and priorities, or one assignee. */
export interface TicketWalk {
  statuses?: readonly string[];
  priorities?: readonly string[];
  assigneeId?: string;
  sortBy: TicketFilter['sortBy'];
  order: 'asc' | 'desc';
}

/**
 * A page of tickets that `match` accepts, in the walk's order. With a sort by
 * creation or update and a status, priority or assignee set, the keys-only
 * view partitions are merged (reads in proportion to the page when most of
 * their tickets match); otherwise the sorted list is walked. Either way a
 * request reads at most READ_BUDGET entries and then answers what it found
 * with a cursor where it stopped, so following the cursor yields every match once.
 */
export async function matchingPage(accountId: string, w: TicketWalk, match: (t: TicketRecord) => boolean, limit: number, startKey?: Key): Promise<{ tickets: TicketRecord[]; nextKey?: Key }> {
  const forward = w.order === 'asc';
  const found: { t: TicketRecord; at: string }[] = [];
  const done = (more: boolean, at?: string) => {
    const page = found.slice(0, limit);
    const next = found.length > limit ? page[page.length - 1].at : more ? at : undefined;
    return { tickets: page.map((f) => f.t), nextKey: next === undefined ? undefined : JSON.parse(next) };
  };
  const updated = w.sortBy === 'updated_at';
  const indexed = (w.sortBy === 'created_at' || updated) && (w.assigneeId !== undefined || w.statuses || w.priorities);
  let read = 0;
  if (indexed) {
    const statuses = w.statuses ?? TICKET_STATUSES;
    const pattern = w.assigneeId !== undefined ? (updated ? 'byAssigneeStatusUpdated' : 'byAssigneeStatus') : updated ? 'byStatusPriorityUpdated' : 'byStatusPriority';
    const sortKey = w.assigneeId !== undefined ? (updated ? 'gsi8sk' : 'gsi7sk') : updated ? 'gsi6sk' : 'gsi5sk';
    const partitions =
      w.assigneeId !== undefined
        ? statuses.map((status) => ({ accountId, assigneeId: w.assigneeId, status }))
        : statuses.flatMap((status) => (w.priorities ?? TICKET_PRIORITIES).map((priority) => ({ accountId, status, priority })));
    let after = startKey?.view;
    for (;;) {
      const want = Math.min(100, Math.max(limit + 1 - found.length, 10));
      const position = after === undefined ? {} : forward ? { skAfter: after } : { skBefore: after };
      const page = await mergedPage(
        partitions.map((v) => tickets.query(pattern, v, { forward, ...position })),
        sortKey,
        want,
      );
      read += page.items.length * partitions.length;
      const idOf = (i: Record<string, unknown>) => String(i.sk).slice('TICKET#'.length);
      const got = new Map((await tickets.getMany(page.items.map((i) => ({ accountId, id: idOf(i) })))).map((t) => [t.id, t]));
      for (const i of page.items) {
        after = String(i[sortKey]);
        const t = got.get(idOf(i));
        if (t && match(t)) found.push({ t, at: JSON.stringify({ view: after }) });
        if (found.length > limit) return done(true);
      }
      if (page.next === undefined) return done(false);
      if (read >= READ_BUDGET) return done(true, JSON.stringify({ view: after }));
    }
  }
  const q = tickets.query(SORT_PATTERN[w.sortBy], { accountId }, { forward });
  let position: Key | undefined = startKey && !('view' in startKey) ? startKey : undefined;
  const keyOf = (i: Record<string, unknown>) => JSON.stringify(Object.fromEntries(['pk', 'sk', ...(q.index ? [`${q.index}pk`, `${q.index}sk`] : [])].map((k) => [k, i[k]])));
  for (;;) {
    const want = Math.min(READ_BUDGET - read, Math.max(limit + 1 - found.length, 100));
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: q.index,
        KeyConditionExpression: q.keyCondition,
        ExpressionAttributeNames: Object.keys(q.names).length ? q.names : undefined,
        ExpressionAttributeValues: q.values,
        ScanIndexForward: forward,
        ExclusiveStartKey: position,
        Limit: want,
      }),
    );
    const items = (out.Items ?? []) as Record<string, unknown>[];
    read += items.length;
    for (const i of items) {
      const t = tickets.fromItem(i);
      if (match(t)) found.push({ t, at: keyOf(i) });
      if (found.length > limit) return done(true);
    }
    position = out.LastEvaluatedKey as Key | undefined;
    if (!position) return done(false);
    if (read >= READ_BUDGET) return done(true, JSON.stringify(position));
  }
}
