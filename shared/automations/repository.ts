import { bindEntity, conditions } from '../db/entity.ts';
import { automationEntities } from '../db/entities/automations.ts';
import { queryAll } from '../db/query.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import type { Rule } from './model.ts';

/** An automation as stored (its position comes from the set's order). */
export interface AutomationRecord {
  id: string;
  accountId: string;
  name: string;
  description: string | null;
  isActive: boolean;
  rule: Rule;
  createdAt: string;
  updatedAt: string;
}

/**
 * The account's automation set: the evaluation order and a version every
 * automation write checks and bumps, so writes of one account serialize
 * (positions, the count cap and the time-rule registry stay exact).
 */
export interface AutomationSet {
  order: string[];
  version: number;
  /** Active automations with a time condition; > 0 puts the account on the hourly job's list (gsi4). */
  timeRules: number;
}

/** While the account has active time rules the set item is listed in gsi4 for the hourly job. */
const sets = bindEntity<AutomationSet & { accountId: string }>(automationEntities.automationSet, {
  fields: ['accountId', 'order', 'version', 'timeRules'],
  keyValues: (s) => ({ timeAccount: s.timeRules > 0 ? s.accountId : null }),
});

const automations = bindEntity<AutomationRecord>(automationEntities.automation, { fields: ['id', 'accountId', 'name', 'description', 'isActive', 'rule', 'createdAt', 'updatedAt'] });

/** Kept as long as SQS could still redeliver the event (its 14-day retention). */
const RUN_MARKER_SECONDS = 14 * 24 * 60 * 60;

const runs = bindEntity<{ accountId: string; eventId: string; automationId: string; at: string }>(automationEntities.automationRun, {
  fields: ['automationId', 'at'],
  extra: (r) => ({ [TTL_ATTRIBUTE]: Math.floor(Date.parse(r.at) / 1000) + RUN_MARKER_SECONDS }),
});

/** Thrown when another write changed the account's automations since they were read; the service re-reads. */
export class StaleAutomationsError extends ConflictError {}

/** The set and every automation of an account, in evaluation order: one Query (the set item shares the prefix). */
export async function loadAutomations(accountId: string): Promise<{ set: AutomationSet; automations: AutomationRecord[] }> {
  const items = await queryAll<Record<string, unknown>>(automations.query('withSet', { accountId }, { skBeginsWith: sets.key({ accountId }).sk }));
  const setItem = items.find((i) => i.type === automationEntities.automationSet.type);
  const stored = setItem && sets.fromItem(setItem);
  const set: AutomationSet = stored ? { order: stored.order, version: stored.version, timeRules: stored.timeRules } : { order: [], version: 0, timeRules: 0 };
  const byId = new Map(items.filter((i) => i.type === automationEntities.automation.type).map((i) => [i.id as string, automations.fromItem(i)]));
  return { set, automations: set.order.map((id) => byId.get(id)).filter((a): a is AutomationRecord => !!a) };
}

export const putAutomationWrite = (a: AutomationRecord): TxWrite => automations.put(a);

export const deleteAutomationWrite = (accountId: string, id: string): TxWrite => automations.delete({ accountId, id });

/**
 * Commit automation writes with the next version of the set, if the set is
 * still at the version that was read.
 */
export async function commitAutomations(accountId: string, next: AutomationSet, writes: TxWrite[]): Promise<void> {
  const expected = next.version - 1;
  const stale = () => new StaleAutomationsError('The automations were changed concurrently; retry the request');
  await transactWrite([sets.put({ accountId, ...next }, expected === 0 ? conditions.absent(stale) : conditions.version('version', expected, stale)), ...writes]);
}

/** Accounts with at least one active time-based automation (gsi4; never a Scan). */
export async function accountsWithTimeRules(): Promise<string[]> {
  const items = await queryAll<Record<string, unknown>>(sets.query('timeAccounts', {}));
  return items.map((i) => sets.fromItem(i).accountId);
}

/** Thrown when an automation already acted on this event (a redelivery). */
export class AlreadyAppliedError extends Error {}

/** Records, in the change's own transaction, that an event has been acted on; a second application fails its condition. */
export function runMarkerWrite(accountId: string, eventId: string, automationId: string, now: Date): TxWrite {
  return runs.put(
    { accountId, eventId, automationId, at: now.toISOString() },
    conditions.absent(() => new AlreadyAppliedError('An automation already acted on this event')),
  );
}
