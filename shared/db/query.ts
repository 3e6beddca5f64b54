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
 * One page of a Query with exact `hasMore`: DynamoDB applies Limit before the
 * filter, so keep reading until limit+1 matches are seen or the key range ends.
 * Without a filter this is a single request.
 */
export async function queryPage<T extends Record<string, unknown>>(q: PageQuery): Promise<Page<T>> {
  const items: T[] = [];
  let startKey: Key | undefined = q.startKey;
  do {
    const out = await ddb.send(new QueryCommand({ ...baseInput(q), ExclusiveStartKey: startKey, Limit: q.limit + 1 - (q.filter ? 0 : items.length) }));
    items.push(...((out.Items ?? []) as T[]));
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey && items.length <= q.limit);
  if (items.length <= q.limit) return { items };
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
