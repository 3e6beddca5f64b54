import { BatchGetCommand, QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { gsiKeys, type GsiName } from './table-definition.ts';
import { ddb, tableName } from './client.ts';

export type Key = Record<string, string>;

export interface PageQuery {
  index?: GsiName;
  keyCondition: string;
  filter?: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
  forward: boolean;
  limit: number;
  startKey?: Key;
}

export interface Page<T> {
  items: T[];
  /** Position after the last returned item, or undefined on the last page. */
  nextKey?: Key;
}

const keyAttributes = (index?: GsiName) => (index ? ['pk', 'sk', gsiKeys(index).partitionKey, gsiKeys(index).sortKey] : ['pk', 'sk']);

function baseInput(q: PageQuery): QueryCommandInput {
  return {
    TableName: tableName(),
    IndexName: q.index,
    KeyConditionExpression: q.keyCondition,
    FilterExpression: q.filter,
    ExpressionAttributeNames: Object.keys(q.names).length ? q.names : undefined,
    ExpressionAttributeValues: q.values,
    ScanIndexForward: q.forward,
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
  let step = q.limit + 1;
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
 * One page of a page-number list (page >= 1) with the exact total: walks the
 * whole key range once (Query, never Scan), counting matches and keeping only
 * those that fall on the page.
 */
export async function numberedPage<T extends Record<string, unknown>>(q: Omit<PageQuery, 'limit' | 'startKey'>, page: number, limit: number): Promise<{ items: T[]; total: number }> {
  const from = (page - 1) * limit;
  const items: T[] = [];
  let total = 0;
  let startKey: Key | undefined;
  do {
    const out = await ddb.send(new QueryCommand({ ...baseInput({ ...q, limit }), ExclusiveStartKey: startKey }));
    for (const item of (out.Items ?? []) as T[]) {
      if (total >= from && total < from + limit) items.push(item);
      total += 1;
    }
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey);
  return { items, total };
}

/** Every match of a Query, in key order. */
export async function queryAll<T extends Record<string, unknown>>(q: Omit<PageQuery, 'limit' | 'startKey'>): Promise<T[]> {
  return (await numberedPage<T>(q, 1, Number.MAX_SAFE_INTEGER)).items;
}

/**
 * Get up to 100 items by key in one BatchGetItem, retrying the keys DynamoDB
 * left unprocessed (throttling) with backoff: an unprocessed key is "not read
 * yet", never "does not exist". The request deadline bounds the retries.
 */
export async function batchGet(keys: Key[]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let pending: Key[] = keys;
  for (let attempt = 0; pending.length; attempt++) {
    if (attempt) await sleep(Math.min(1000, 25 * 2 ** attempt) * Math.random());
    const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending } } }));
    items.push(...((out.Responses?.[tableName()] ?? []) as Record<string, unknown>[]));
    pending = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
  }
  return items;
}
