import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { ddb, tableName } from '../db/client.ts';
import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { slaEntities } from '../db/entities/sla.ts';
import { queryAll } from '../db/query.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
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

const policies = bindEntity<PolicyRecord>(slaEntities.slaPolicy, {
  fields: ['id', 'accountId', 'name', 'description', 'isActive', 'timeMode', 'conditions', 'targets', 'position', 'createdAt', 'updatedAt'],
});

const policySets = bindEntity<PolicySet & { accountId: string }>(slaEntities.slaPolicySet, { fields: ['count', 'nextPosition', 'version'] });

const schedules = bindEntity<{ accountId: string; schedule: BusinessSchedule; updatedAt: string }>(slaEntities.slaSchedule, { fields: ['schedule', 'updatedAt'] });

/** The item is in the due index (gsi4) only while a deadline runs: the index stays sparse. */
const states = bindEntity<StateRecord>(slaEntities.slaState, {
  fields: ['accountId', 'ticketId', 'facts', 'policy', 'breaches', 'nextDueAt', 'version', 'updatedAt'],
  keyValues: (s) => ({ dueShard: dueShard(s.ticketId) }),
  // No empty map is stored: DynamoDB Local's stream renders `{M: {}}` as `{}`, which no reader can unmarshall.
  extra: (s) => ({ breaches: Object.keys(s.breaches).length ? s.breaches : undefined }),
  normalize: (s) => ({ ...s, breaches: s.breaches ?? {} }),
});

export class StalePolicySetError extends ConflictError {}

/** Every policy of an account (at most MAX_POLICIES), in key order. */
export async function listPolicies(accountId: string): Promise<PolicyRecord[]> {
  return (await queryAll<Record<string, unknown>>(policies.query('all', { accountId }))).map(policies.fromItem);
}

/** What the SLA consumer needs of an account before it touches a ticket's state. */
export interface SlaSettings {
  policies: PolicyRecord[];
  /** The account has had a policy at some time (its set head exists): states may exist that must move on. */
  everHadPolicies: boolean;
  /** The account's own business hours (null: the default). */
  schedule: BusinessSchedule | null;
}

/**
 * The account's policies, its policy set head and its schedule in one Query:
 * their sort keys (SLAPOLICY#<id>, SLAPOLICYSET, SLASCHEDULE) are neighbours,
 * and nothing else of the account sorts between them. Eventually consistent,
 * like the policy list it replaces in the consumer.
 */
export async function getSlaSettings(accountId: string): Promise<SlaSettings> {
  const q = policies.query('all', { accountId }, { skBetween: ['SLAPOLICY#', 'SLASCHEDULE'] });
  const out: SlaSettings = { policies: [], everHadPolicies: false, schedule: null };
  for (const item of await queryAll<Record<string, unknown>>(q)) {
    if (item.type === slaEntities.slaPolicy.type) out.policies.push(policies.fromItem(item));
    else if (item.type === slaEntities.slaPolicySet.type) out.everHadPolicies = true;
    else if (item.type === slaEntities.slaSchedule.type) out.schedule = schedules.fromItem(item).schedule;
  }
  out.everHadPolicies ||= out.policies.length > 0;
  return out;
}

export async function getPolicy(accountId: string, id: string, consistent = false): Promise<PolicyRecord | null> {
  return policies.get({ accountId, id }, { consistent });
}

export async function getPolicySet(accountId: string): Promise<PolicySet> {
  const found = await policySets.get({ accountId }, { consistent: true });
  return { count: Number(found?.count ?? 0), nextPosition: Number(found?.nextPosition ?? 0), version: Number(found?.version ?? 0) };
}

/** Bump the set head if it is still at the version read (absent counts as version 0). */
function setWrite(accountId: string, read: PolicySet, next: PolicySet): TxWrite {
  const stale = () => new StalePolicySetError('The SLA policies were changed concurrently');
  return policySets.put({ accountId, ...next }, read.version === 0 ? conditions.absent(stale) : conditions.version('version', read.version, stale));
}

/** Create a policy and bump the set; `related` (its audit) commits with it. */
export async function createPolicy(p: PolicyRecord, set: PolicySet, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    policies.put(p, conditions.absent()),
    setWrite(p.accountId, set, { count: set.count + 1, nextPosition: Math.max(set.nextPosition, p.position + 1), version: set.version + 1 }),
    ...related,
  ]);
}

/** The policy changed (or went) since it was read: re-read and retry. */
export class StalePolicyError extends ConflictError {}

/**
 * Replace the definition of a policy as read (`current`), if it is unchanged
 * since (every write of a policy moves its `updatedAt`). Position and creation
 * are left as stored. `related` (its audit) commits with it.
 */
export async function replacePolicy(
  current: PolicyRecord,
  def: Pick<PolicyRecord, 'name' | 'description' | 'isActive' | 'timeMode' | 'conditions' | 'targets' | 'updatedAt'>,
  related: TxWrite[] = [],
): Promise<PolicyRecord> {
  const unchanged: Condition = {
    expr: 'attribute_exists(pk) AND #u = :u',
    names: { '#u': 'updatedAt' },
    values: { ':u': current.updatedAt },
    error: () => new StalePolicyError('The SLA policy was changed concurrently'),
  };
  await transactWrite([policies.updateAttributes(current, { set: def }, unchanged), ...related]);
  return { ...current, ...def };
}

/** Delete a policy and bump the set; `related` (its audit) commits with it. */
export async function deletePolicy(accountId: string, id: string, set: PolicySet, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    policies.delete(
      { accountId, id },
      conditions.present(() => new NotFoundError('SLA policy')),
    ),
    setWrite(accountId, set, { ...set, count: Math.max(0, set.count - 1), version: set.version + 1 }),
    ...related,
  ]);
}

/** Give every policy its new position, in one transaction guarded by the set version; `related` (its audit) commits with it. */
export async function reorderPolicies(accountId: string, orderedIds: string[], set: PolicySet, now: string, related: TxWrite[] = []): Promise<void> {
  const stale = () => new StalePolicySetError('The SLA policies were changed concurrently');
  await transactWrite([
    ...orderedIds.map((id, position) => policies.updateAttributes({ accountId, id }, { set: { position, updatedAt: now } }, conditions.present(stale))),
    setWrite(accountId, set, { ...set, nextPosition: orderedIds.length, version: set.version + 1 }),
    ...related,
  ]);
}

export async function getSchedule(accountId: string): Promise<BusinessSchedule | null> {
  const found = await schedules.get({ accountId });
  return found ? found.schedule : null;
}

/** The account's own schedule and when it was set, read consistently (a change is conditioned on it); null: the default. */
export async function getScheduleRecord(accountId: string): Promise<{ schedule: BusinessSchedule; updatedAt: string } | null> {
  const found = await schedules.get({ accountId }, { consistent: true });
  return found ? { schedule: found.schedule, updatedAt: found.updatedAt } : null;
}

/** The schedule changed since it was read: re-read and retry. */
export class StaleScheduleError extends ConflictError {}

/**
 * Set (or, with null, remove) the account's schedule if it is still as read
 * (`readAt`: the read record's updatedAt, null when there was none).
 * `related` (its audit) commits with it.
 */
export async function putSchedule(accountId: string, schedule: BusinessSchedule | null, now: string, readAt: string | null, related: TxWrite[] = []): Promise<void> {
  const stale = () => new StaleScheduleError('The business hours were changed concurrently');
  const asRead: Condition = readAt === null ? conditions.absent(stale) : { expr: '#u = :u', names: { '#u': 'updatedAt' }, values: { ':u': readAt }, error: stale };
  await transactWrite([schedule ? schedules.put({ accountId, schedule, updatedAt: now }, asRead) : schedules.delete({ accountId }, asRead), ...related]);
}

export async function getState(accountId: string, ticketId: string): Promise<StateRecord | null> {
  return states.get({ accountId, ticketId }, { consistent: true });
}

/** Many tickets' states in BatchGetItem calls of 100 (recompute batches), keyed by ticket id. */
export async function getStates(accountId: string, ticketIds: string[]): Promise<Map<string, StateRecord>> {
  const found = await states.getMany(
    ticketIds.map((ticketId) => ({ accountId, ticketId })),
    { consistent: true },
  );
  return new Map(found.map((s) => [String(s.ticketId), s]));
}

export class StaleStateError extends ConflictError {}

/**
 * Write a state if it is still at the version read (null: not there yet),
 * with what belongs to it (breach events through the outbox).
 */
export async function putState(s: StateRecord, expectedVersion: number | null, related: TxWrite[] = []): Promise<void> {
  const stale = () => new StaleStateError('The SLA state was changed concurrently');
  const put = states.put(s, expectedVersion === null ? conditions.absent(stale) : conditions.version('version', expectedVersion, stale));
  // Alone, a conditional Put costs half a transaction's capacity.
  if (!related.length) await writeNow(put);
  else await transactWrite([put, ...related]);
}

export async function deleteState(accountId: string, ticketId: string): Promise<void> {
  await writeNow(states.delete({ accountId, ticketId }));
}

/** States whose next deadline is at or before `nowIso` in one shard of the due index, earliest first. */
export async function dueStates(shard: number, nowIso: string, limit: number): Promise<{ accountId: string; ticketId: string }[]> {
  // One page of `limit`, reading only the two attributes the check needs.
  const q = states.query('due', { dueShard: shard }, { skBefore: `${nowIso}#~` });
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: q.index,
      KeyConditionExpression: q.keyCondition,
      ExpressionAttributeValues: q.values,
      ProjectionExpression: 'accountId, ticketId',
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map((i) => ({ accountId: String(i.accountId), ticketId: String(i.ticketId) }));
}
