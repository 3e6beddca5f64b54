import { BatchGetCommand, BatchWriteCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { indexKeys, type IndexName } from './table-definition.ts';
import { ddb, tableName } from './client.ts';

export type Key = Record<string, string>;

export interface PageQuery {
  index?: IndexName;
  keyCondition: string;
  filter?: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
  forward: boolean;
  /** Strongly consistent (the table's own keys only): what a write just committed. */
  consistent?: boolean;
  limit: number;
  startKey?: Key;
}

export interface Page<T> {
  items: T[];
  /** Position after the last returned item, or undefined on the last page. */
  nextKey?: Key;
}

const keyAttributes = (index?: IndexName) => (index ? ['pk', 'sk', indexKeys(index).partitionKey, indexKeys(index).sortKey] : ['pk', 'sk']);

function baseInput(q: PageQuery): QueryCommandInput {
  return {
    TableName: tableName(),
    IndexName: q.index,
    KeyConditionExpression: q.keyCondition,
    FilterExpression: q.filter,
    ExpressionAttributeNames: Object.keys(q.names).length ? q.names : undefined,
    ExpressionAttributeValues: q.values,
    ScanIndexForward: q.forward,
    ...(q.consistent ? { ConsistentRead: true } : {}),
  };
}

/**
 * Most items one page request may read (evaluate) from the store, matched or
 * not: the bound on a filtered list's work whatever the data (api-spec
 * Limits; docs/decisions.md "Bounded work per request").
 */
export const READ_BUDGET = 1_000;

/**
 * One page of a Query. DynamoDB applies Limit before the filter, so a
 * filtered page keeps reading (each Query reading twice as many items as the
 * last) until it has limit+1 matches (exact `hasMore`), the key range ends, or
 * it has read `budget` items. Out of budget, it answers the matches it found
 * with `nextKey` at the read position: the next page continues there, so
 * nothing is skipped or repeated, and every page makes progress — a page can
 * be empty with more to come only when a whole budget held no match.
 * Without a filter this is a single request.
 */
export async function queryPage<T extends Record<string, unknown>>(q: PageQuery & { budget?: number }): Promise<Page<T>> {
  const budget = Math.max(q.budget ?? READ_BUDGET, q.limit + 1);
  const items: T[] = [];
  let startKey: Key | undefined = q.startKey;
  let read = 0;
  // A filter usually discards items: start with a read worth a round trip, then double.
  let step = q.filter ? Math.max(q.limit + 1, 100) : q.limit + 1;
  do {
    const want = q.filter ? Math.min(step, budget - read) : q.limit + 1 - items.length;
    const out = await ddb.send(new QueryCommand({ ...baseInput(q), ExclusiveStartKey: startKey, Limit: want }));
    items.push(...((out.Items ?? []) as T[]));
    read += out.ScannedCount ?? out.Items?.length ?? 0;
    startKey = out.LastEvaluatedKey as Key | undefined;
    step *= 2;
  } while (startKey && items.length <= q.limit && read < budget);
  if (items.length <= q.limit) return { items, nextKey: startKey };
  const page = items.slice(0, q.limit);
  const last = page[page.length - 1];
  const nextKey = Object.fromEntries(keyAttributes(q.index).map((a) => [a, String(last[a])]));
  return { items: page, nextKey };
}

/**
 * One page merged from several partitions that share a sort-key space (a view
 * spanning several index partitions): each is read for limit+1 entries after
 * the position, in parallel, and the entries are merged in `sortKey` order.
 * Reads at most partitions x (limit+1) entries whatever the partitions hold;
 * `next` is the sort key of the page's last entry when more follow.
 */
export async function mergedPage<T extends Record<string, unknown>>(qs: Omit<PageQuery, 'limit' | 'startKey'>[], sortKey: string, limit: number): Promise<{ items: T[]; next?: string }> {
  const forward = qs[0]?.forward ?? true;
  const parts = await Promise.all(qs.map((q) => ddb.send(new QueryCommand({ ...baseInput({ ...q, limit }), Limit: limit + 1 }))));
  const all = parts.flatMap((p) => (p.Items ?? []) as T[]);
  const key = (i: T) => String(i[sortKey]);
  all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (forward ? 1 : -1));
  const items = all.slice(0, limit);
  return { items, next: all.length > limit ? key(items[items.length - 1]) : undefined };
}

/**
 * One page merged from the write shards of a time-ordered index (partitions
 * that share a sort-key space and split one stream of writes between them).
 * Each shard is read for `perShard` entries (default limit+1), in parallel.
 * A shard that has more stops the page at the position it read to: only
 * entries up to the nearest such position are answered, so nothing a shard
 * has not read yet can be skipped, and `next` (the sort key of the page's last
 * entry) resumes every shard there. Reads at most shards x perShard entries;
 * a page is never empty while a shard has more, unless a filter discarded
 * every entry read.
 */
export async function shardedPage<T extends Record<string, unknown>>(
  qs: Omit<PageQuery, 'limit' | 'startKey'>[],
  sortKey: string,
  limit: number,
  perShard = limit + 1,
): Promise<{ items: T[]; next?: string; read: number }> {
  const forward = qs[0]?.forward ?? true;
  const before = (a: string, b: string) => (forward ? a < b : a > b);
  const parts = await Promise.all(qs.map((q) => ddb.send(new QueryCommand({ ...baseInput({ ...q, limit }), Limit: perShard }))));
  let stop: string | undefined;
  let read = 0;
  const all: T[] = [];
  for (const p of parts) {
    read += p.ScannedCount ?? p.Items?.length ?? 0;
    all.push(...((p.Items ?? []) as T[]));
    const reached = p.LastEvaluatedKey?.[sortKey] as string | undefined;
    if (reached !== undefined && (stop === undefined || before(reached, stop))) stop = reached;
  }
  const key = (i: T) => String(i[sortKey]);
  const eligible = all.filter((i) => stop === undefined || !before(stop, key(i)));
  eligible.sort((a, b) => (before(key(a), key(b)) ? -1 : before(key(b), key(a)) ? 1 : 0));
  const items = eligible.slice(0, limit);
  const more = eligible.length > limit || stop !== undefined;
  const last = items.length ? key(items[items.length - 1]) : stop;
  return { items, next: more ? last : undefined, read };
}

/** Count the matches of a Query, stopping at `cap` (api-spec: total_count caps at 10,000). */
export async function countMatches(q: Omit<PageQuery, 'limit' | 'startKey' | 'forward'>, cap: number): Promise<number> {
  let count = 0;
  let startKey: Key | undefined;
  do {
    const out = await ddb.send(new QueryCommand({ ...baseInput({ ...q, forward: true, limit: cap }), Select: 'COUNT', ExclusiveStartKey: startKey }));
    count += out.Count ?? 0;
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey && count < cap);
  return Math.min(count, cap);
}

/**
 * Most items a filtered page-number list evaluates to count its `total`
 * (api-spec caps total_count at 10,000 too): past it, `total` counts the
 * matches among the first 10,000 items of the list's order.
 */
export const FILTERED_TOTAL_CAP = 10_000;

/**
 * Most items one Query of a page-number list asks for (its Limit): a deep
 * page reads its depth in Queries of at most this many items, so no page
 * number turns into a Limit DynamoDB refuses (page 2^31 of 15 asked for
 * about 3 x 10^10: not an Integer to AWS, an InternalFailure to DynamoDB
 * Local). A Query answers at most 1 MB anyway.
 */
export const PAGE_QUERY_LIMIT = 1_000;

/**
 * One page of a page-number list (page 1..2^53, decisions §5): reads the
 * list in key order only as far as the page's last item (a deep page costs
 * its depth, in Queries of at most PAGE_QUERY_LIMIT items), never the whole
 * range, and keeps only the page's items. `total` comes from `knownTotal` (a
 * counter kept in the same transactions as creates and deletes) when the
 * caller has one; otherwise, or with a filter, from a Select COUNT bounded by
 * FILTERED_TOTAL_CAP items evaluated.
 *
 * Page 1 reads the page and the total side by side (no count when the page
 * read reached the end). A later page gets the total first: a page past the
 * last one answers no items with page 1's total, and reads nothing of the
 * list but that total (a filtered list's matches are those among its first
 * FILTERED_TOTAL_CAP items, so any page past them is past the last one).
 */
export async function numberedPage<T extends Record<string, unknown>>(
  q: Omit<PageQuery, 'limit' | 'startKey'>,
  page: number,
  limit: number,
  knownTotal?: Promise<number | undefined>,
): Promise<{ items: T[]; total: number }> {
  // Past 2^53 / limit pages `from` is no longer exact, but it is only compared with totals far below it.
  const from = (page - 1) * limit;
  knownTotal?.catch(() => undefined);
  const readPage = async () => {
    const items: T[] = [];
    let seen = 0;
    let startKey: Key | undefined;
    let read = 0;
    let step = q.filter ? Math.min(FILTERED_TOTAL_CAP, Math.max(from + limit + 1, 200)) : from + limit;
    do {
      const want = q.filter ? Math.min(step, FILTERED_TOTAL_CAP - read) : from + limit - seen;
      const out = await ddb.send(new QueryCommand({ ...baseInput({ ...q, limit }), ExclusiveStartKey: startKey, Limit: Math.max(1, Math.min(want, PAGE_QUERY_LIMIT)) }));
      for (const item of (out.Items ?? []) as T[]) {
        if (seen >= from && seen < from + limit) items.push(item);
        seen++;
      }
      read += out.ScannedCount ?? out.Items?.length ?? 0;
      startKey = out.LastEvaluatedKey as Key | undefined;
      step *= 2;
    } while (startKey && seen < from + limit && (!q.filter || read < FILTERED_TOTAL_CAP));
    return { items, reachedEnd: !startKey, seen };
  };
  if (page > 1) {
    const counted = q.filter ? undefined : await knownTotal;
    const total = counted !== undefined ? Math.max(counted, 0) : await countEvaluated(q, FILTERED_TOTAL_CAP);
    return { items: from < total ? (await readPage()).items : [], total };
  }
  const [result, counted] = await Promise.all([readPage(), q.filter ? undefined : knownTotal]);
  if (counted !== undefined) return { items: result.items, total: Math.max(counted, 0) };
  if (result.reachedEnd) return { items: result.items, total: result.seen };
  return { items: result.items, total: await countEvaluated(q, FILTERED_TOTAL_CAP) };
}

/** Count a Query's matches among at most `cap` evaluated items. */
async function countEvaluated(q: Omit<PageQuery, 'limit' | 'startKey'>, cap: number): Promise<number> {
  let count = 0;
  let read = 0;
  let startKey: Key | undefined;
  do {
    const out = await ddb.send(new QueryCommand({ ...baseInput({ ...q, limit: cap }), Select: 'COUNT', ExclusiveStartKey: startKey, Limit: cap - read }));
    count += out.Count ?? 0;
    read += out.ScannedCount ?? 0;
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey && read < cap);
  return count;
}

/**
 * Every match of a Query, in key order (callers whose work is bounded by
 * design: an organization's contacts, an account's webhooks, groups or field
 * definitions). `projection` reads only the attributes it names; `until`
 * stops between requests once the caller has enough.
 */
export async function queryAll<T extends Record<string, unknown>>(q: Omit<PageQuery, 'limit' | 'startKey'> & { projection?: string; until?: (soFar: T[]) => boolean }): Promise<T[]> {
  const items: T[] = [];
  let startKey: Key | undefined;
  do {
    const out = await ddb.send(new QueryCommand({ ...baseInput({ ...q, limit: 0 }), ProjectionExpression: q.projection, ExclusiveStartKey: startKey }));
    items.push(...((out.Items ?? []) as T[]));
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey && !q.until?.(items));
  return items;
}

/**
 * Get up to 100 items by key in one BatchGetItem, retrying the keys DynamoDB
 * left unprocessed (throttling) with backoff: an unprocessed key is "not read
 * yet", never "does not exist". The request deadline bounds the retries.
 * `consistent` reads strongly consistently (what a write just committed).
 */
export async function batchGet(keys: Key[], opts: { consistent?: boolean } = {}): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let pending: Key[] = keys;
  for (let attempt = 0; pending.length; attempt++) {
    if (attempt) await sleep(Math.min(1000, 25 * 2 ** attempt) * Math.random());
    const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ...(opts.consistent ? { ConsistentRead: true } : {}) } } }));
    items.push(...((out.Responses?.[tableName()] ?? []) as Record<string, unknown>[]));
    pending = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  return items;
}

/** BatchWriteItem requests, `perCall` (at most 25) per call and `concurrency` calls at once, retrying what DynamoDB left unprocessed with backoff. */
async function batchWrite(requests: readonly unknown[], concurrency = 1, perCall = 25): Promise<void> {
  const size = Math.min(25, Math.max(1, perCall));
  const chunks = Array.from({ length: Math.ceil(requests.length / size) }, (_, i) => requests.slice(i * size, i * size + size));
  const next = async (): Promise<void> => {
    for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
      let pending: unknown[] = chunk;
      for (let attempt = 0; pending.length; attempt++) {
        if (attempt) await sleep(Math.min(1000, 25 * 2 ** attempt) * Math.random());
        const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending as never } }));
        pending = out.UnprocessedItems?.[tableName()] ?? [];
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, next));
}

/**
 * Delete items by key (a missing item counts as deleted). For background
 * clean-ups whose items nothing reads any more; not a transaction.
 */
export const batchDelete = (keys: readonly Key[], opts: { concurrency?: number; perCall?: number } = {}): Promise<void> =>
  batchWrite(
    keys.map((Key) => ({ DeleteRequest: { Key } })),
    opts.concurrency,
    opts.perCall,
  );

/**
 * Put whole items, unconditionally; not a transaction. For loading data that
 * nothing reads yet (the tests' and the bench's large accounts).
 */
export const batchPut = (items: readonly Record<string, unknown>[], opts: { concurrency?: number } = {}): Promise<void> =>
  batchWrite(
    items.map((Item) => ({ PutRequest: { Item } })),
    opts.concurrency,
  );
