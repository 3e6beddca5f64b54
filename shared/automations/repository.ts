import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
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

const FIELDS = ['id', 'accountId', 'name', 'description', 'isActive', 'rule', 'createdAt', 'updatedAt'] as const;
const toRecord = (i: Record<string, unknown>) => Object.fromEntries(FIELDS.map((f) => [f, i[f] ?? null])) as unknown as AutomationRecord;

/** Thrown when another write changed the account's automations since they were read; the service re-reads. */
export class StaleAutomationsError extends ConflictError {}

/** The set and every automation of an account, in evaluation order: one Query (the set item shares the prefix). */
export async function loadAutomations(accountId: string): Promise<{ set: AutomationSet; automations: AutomationRecord[] }> {
  const items = await queryAll<Record<string, unknown>>({
    keyCondition: 'pk = :pk AND begins_with(sk, :p)',
    names: {},
    values: { ':pk': keys.accountPk(accountId), ':p': keys.automationPrefix },
    forward: true,
  });
  const setItem = items.find((i) => i.sk === keys.automationSet(accountId).sk);
  const set: AutomationSet = setItem ? { order: setItem.order as string[], version: setItem.version as number, timeRules: setItem.timeRules as number } : { order: [], version: 0, timeRules: 0 };
  const byId = new Map(items.filter((i) => i.type === 'automation').map((i) => [i.id as string, toRecord(i)]));
  return { set, automations: set.order.map((id) => byId.get(id)).filter((a): a is AutomationRecord => !!a) };
}

export const putAutomationWrite = (a: AutomationRecord): TxWrite => ({ item: { Put: { TableName: tableName(), Item: { ...keys.automation(a.accountId, a.id), type: 'automation', ...a } } } });

export const deleteAutomationWrite = (accountId: string, id: string): TxWrite => ({ item: { Delete: { TableName: tableName(), Key: keys.automation(accountId, id) } } });

/**
 * Commit automation writes with the next version of the set, if the set is
 * still at the version that was read. While the account has active time
 * rules the set item is listed in gsi4 for the hourly job.
 */
export async function commitAutomations(accountId: string, next: AutomationSet, writes: TxWrite[]): Promise<void> {
  const expected = next.version - 1;
  const registry = next.timeRules > 0 ? { gsi4pk: keys.automationTimeAccounts, gsi4sk: accountId } : {};
  await transactWrite([
    {
      item: {
        Put: {
          TableName: tableName(),
          Item: { ...keys.automationSet(accountId), type: 'automationSet', accountId, ...next, ...registry },
          ConditionExpression: expected === 0 ? 'attribute_not_exists(pk)' : 'version = :v',
          ExpressionAttributeValues: expected === 0 ? undefined : { ':v': expected },
        },
      },
      onConditionFailed: () => new StaleAutomationsError('The automations were changed concurrently; retry the request'),
    },
    ...writes,
  ]);
}

/** Accounts with at least one active time-based automation (gsi4; never a Scan). */
export async function accountsWithTimeRules(): Promise<string[]> {
  const items = await queryAll<Record<string, unknown>>({ index: 'gsi4', keyCondition: 'gsi4pk = :pk', names: {}, values: { ':pk': keys.automationTimeAccounts }, forward: true });
  return items.map((i) => i.gsi4sk as string);
}

/** Kept as long as SQS could still redeliver the event (its 14-day retention). */
const RUN_MARKER_SECONDS = 14 * 24 * 60 * 60;

/** Thrown when an automation already acted on this event (a redelivery). */
export class AlreadyAppliedError extends Error {}

/** Records, in the change's own transaction, that an event has been acted on; a second application fails its condition. */
export function runMarkerWrite(accountId: string, eventId: string, automationId: string, now: Date): TxWrite {
  return {
    item: {
      Put: {
        TableName: tableName(),
        Item: { ...keys.automationRun(accountId, eventId), type: 'automationRun', automationId, at: now.toISOString(), [TTL_ATTRIBUTE]: Math.floor(now.getTime() / 1000) + RUN_MARKER_SECONDS },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new AlreadyAppliedError('An automation already acted on this event'),
  };
}

/** Has an automation already acted on this event? */
export async function hasRun(accountId: string, eventId: string): Promise<boolean> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.automationRun(accountId, eventId), ProjectionExpression: 'pk' }));
  return !!out.Item;
}
