import { BatchGetCommand, DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand, type BatchGetCommandOutput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { createHash } from 'node:crypto';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { queryAll } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import type { BusinessSchedule } from './clock.ts';
import type { AppliedPolicy, Breaches, SlaFacts } from './engine.ts';
import type { SlaPolicy } from './model.ts';

/** A policy as stored: the resource plus its tenant. */
export interface PolicyRecord extends SlaPolicy {
  accountId: string;
}

/** The head of an account's policy set: every create, delete and reorder bumps its version, so a reorder sees exactly the current set. */
export interface PolicySet {
  count: number;
  nextPosition: number;
  version: number;
}

export interface StateRecord {
  accountId: string;
  ticketId: string;
  facts: SlaFacts;
  policy: AppliedPolicy | null;
  breaches: Breaches;
  /** The earliest deadline still watched (null: nothing running); mirrored in the due index. */
  nextDueAt: string | null;
  version: number;
  updatedAt: string;
}

/** Shards of the due index: the breach check reads each one every minute. */
export const DUE_SHARDS = 8;
export const dueShard = (ticketId: string) => createHash('sha1').update(ticketId).digest()[0] % DUE_SHARDS;

const POLICY_FIELDS: (keyof PolicyRecord)[] = ['id', 'accountId', 'name', 'description', 'isActive', 'timeMode', 'conditions', 'targets', 'position', 'createdAt', 'updatedAt'];
const toPolicy = (i: Record<string, unknown>) => Object.fromEntries(POLICY_FIELDS.map((f) => [f, i[f] ?? null])) as unknown as PolicyRecord;
const policyItem = (p: PolicyRecord) => ({ ...keys.slaPolicy(p.accountId, p.id), type: 'slaPolicy', ...p });

export class StalePolicySetError extends ConflictError {}

/** Every policy of an account (at most MAX_POLICIES), in key order. */
export async function listPolicies(accountId: string): Promise<PolicyRecord[]> {
  const items = await queryAll<Record<string, unknown>>({
    keyCondition: 'pk = :pk AND begins_with(sk, :p)',
    names: {},
    values: { ':pk': keys.accountPk(accountId), ':p': keys.slaPolicyPrefix },
    forward: true,
  });
  return items.map(toPolicy);
}

export async function getPolicy(accountId: string, id: string): Promise<PolicyRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.slaPolicy(accountId, id) }));
  return out.Item ? toPolicy(out.Item) : null;
}

export async function getPolicySet(accountId: string): Promise<PolicySet> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.slaPolicySet(accountId), ConsistentRead: true }));
  return { count: Number(out.Item?.count ?? 0), nextPosition: Number(out.Item?.nextPosition ?? 0), version: Number(out.Item?.version ?? 0) };
}

/** Bump the set head if it is still at the version read (absent counts as version 0). */
function setWrite(accountId: string, read: PolicySet, next: PolicySet): TxWrite {
  return {
    item: {
      Put: {
        TableName: tableName(),
        Item: { ...keys.slaPolicySet(accountId), type: 'slaPolicySet', ...next },
        ConditionExpression: read.version === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
        ExpressionAttributeValues: read.version === 0 ? undefined : { ':v': read.version },
      },
    },
    onConditionFailed: () => new StalePolicySetError('The SLA policies were changed concurrently'),
  };
}

export async function createPolicy(p: PolicyRecord, set: PolicySet): Promise<void> {
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: policyItem(p), ConditionExpression: 'attribute_not_exists(pk)' } } },
    setWrite(p.accountId, set, { count: set.count + 1, nextPosition: Math.max(set.nextPosition, p.position + 1), version: set.version + 1 }),
  ]);
}

/**
 * Replace a policy's definition if it still exists. Position and creation are
 * left as stored, so a reorder racing the update is never undone.
 */
export async function replacePolicy(
  accountId: string,
  id: string,
  def: Pick<PolicyRecord, 'name' | 'description' | 'isActive' | 'timeMode' | 'conditions' | 'targets' | 'updatedAt'>,
): Promise<PolicyRecord> {
  const fields = Object.keys(def) as (keyof typeof def)[];
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.slaPolicy(accountId, id),
        UpdateExpression: `SET ${fields.map((f) => `#${f} = :${f}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.fromEntries(fields.map((f) => [`#${f}`, f])),
        ExpressionAttributeValues: Object.fromEntries(fields.map((f) => [`:${f}`, def[f]])),
        ReturnValues: 'ALL_NEW',
      }),
    );
    return toPolicy(out.Attributes!);
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new NotFoundError('SLA policy');
    throw err;
  }
}

export async function deletePolicy(accountId: string, id: string, set: PolicySet): Promise<void> {
  await transactWrite([
    { item: { Delete: { TableName: tableName(), Key: keys.slaPolicy(accountId, id), ConditionExpression: 'attribute_exists(pk)' } }, onConditionFailed: () => new NotFoundError('SLA policy') },
    setWrite(accountId, set, { ...set, count: Math.max(0, set.count - 1), version: set.version + 1 }),
  ]);
}

/** Give every policy its new position, in one transaction guarded by the set version. */
export async function reorderPolicies(accountId: string, orderedIds: string[], set: PolicySet, now: string): Promise<void> {
  await transactWrite([
    ...orderedIds.map((id, position): TxWrite => ({
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.slaPolicy(accountId, id),
          UpdateExpression: 'SET #position = :p, updatedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#position': 'position' },
          ExpressionAttributeValues: { ':p': position, ':now': now },
        },
      },
      onConditionFailed: () => new StalePolicySetError('The SLA policies were changed concurrently'),
    })),
    setWrite(accountId, set, { ...set, nextPosition: orderedIds.length, version: set.version + 1 }),
  ]);
}

export async function getSchedule(accountId: string): Promise<BusinessSchedule | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.slaSchedule(accountId) }));
  return out.Item ? (out.Item.schedule as BusinessSchedule) : null;
}

export async function putSchedule(accountId: string, schedule: BusinessSchedule | null, now: string): Promise<void> {
  if (!schedule) await ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.slaSchedule(accountId) }));
  else await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...keys.slaSchedule(accountId), type: 'slaSchedule', schedule, updatedAt: now } }));
}

const STATE_FIELDS: (keyof StateRecord)[] = ['accountId', 'ticketId', 'facts', 'policy', 'breaches', 'nextDueAt', 'version', 'updatedAt'];
const toState = (i: Record<string, unknown>) => ({ ...Object.fromEntries(STATE_FIELDS.map((f) => [f, i[f] ?? null])), breaches: i.breaches ?? {} }) as unknown as StateRecord;

export async function getState(accountId: string, ticketId: string): Promise<StateRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.slaState(accountId, ticketId), ConsistentRead: true }));
  return out.Item ? toState(out.Item) : null;
}

/** Many tickets' states in BatchGetItem calls of 100 (recompute batches), keyed by ticket id. */
export async function getStates(accountId: string, ticketIds: string[]): Promise<Map<string, StateRecord>> {
  const found = new Map<string, StateRecord>();
  for (let i = 0; i < ticketIds.length; i += 100) {
    let request: Record<string, any> | undefined = { [tableName()]: { Keys: ticketIds.slice(i, i + 100).map((id) => keys.slaState(accountId, id)), ConsistentRead: true } };
    for (let attempt = 0; request && Object.keys(request).length; attempt++) {
      if (attempt) await sleep(Math.min(1000, 20 * 2 ** attempt));
      const out: BatchGetCommandOutput = await ddb.send(new BatchGetCommand({ RequestItems: request }));
      for (const item of out.Responses?.[tableName()] ?? []) found.set(String(item.ticketId), toState(item));
      request = out.UnprocessedKeys;
    }
  }
  return found;
}

export class StaleStateError extends ConflictError {}

/**
 * Write a state if it is still at the version read (null: not there yet),
 * with what belongs to it (breach events through the outbox). The item is in
 * the due index (gsi4) only while a deadline runs: the index stays sparse.
 */
export async function putState(s: StateRecord, expectedVersion: number | null, related: TxWrite[] = []): Promise<void> {
  const due = s.nextDueAt ? { gsi4pk: keys.slaDue(dueShard(s.ticketId)), gsi4sk: keys.slaDueSort(s.nextDueAt, s.accountId, s.ticketId) } : {};
  const put = {
    TableName: tableName(),
    // No empty map is stored: DynamoDB Local's stream renders `{M: {}}` as `{}`, which no reader can unmarshall.
    Item: { ...keys.slaState(s.accountId, s.ticketId), type: 'slaState', ...s, breaches: Object.keys(s.breaches).length ? s.breaches : undefined, ...due },
    ConditionExpression: expectedVersion === null ? 'attribute_not_exists(pk)' : 'version = :v',
    ExpressionAttributeValues: expectedVersion === null ? undefined : { ':v': expectedVersion },
  };
  const stale = () => new StaleStateError('The SLA state was changed concurrently');
  if (!related.length) {
    // Alone, a conditional Put costs half a transaction's capacity.
    try {
      await ddb.send(new PutCommand(put));
    } catch (err) {
      throw (err as Error).name === 'ConditionalCheckFailedException' ? stale() : err;
    }
    return;
  }
  await transactWrite([{ item: { Put: put }, onConditionFailed: stale }, ...related]);
}

export async function deleteState(accountId: string, ticketId: string): Promise<void> {
  await ddb.send(new DeleteCommand({ TableName: tableName(), Key: keys.slaState(accountId, ticketId) }));
}

/** States whose next deadline is at or before `nowIso` in one shard of the due index, earliest first. */
export async function dueStates(shard: number, nowIso: string, limit: number): Promise<{ accountId: string; ticketId: string }[]> {
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi4',
      KeyConditionExpression: 'gsi4pk = :pk AND gsi4sk < :bound',
      ExpressionAttributeValues: { ':pk': keys.slaDue(shard), ':bound': `${nowIso}#~` },
      ProjectionExpression: 'accountId, ticketId',
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ accountId: String(i.accountId), ticketId: String(i.ticketId) }));
}
