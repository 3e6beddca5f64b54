import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { countMatches, queryPage, type Key, type PageQuery } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, type Ticket } from './model.ts';

/** A ticket as stored: the resource plus its tenant and version. */
export interface TicketRecord extends Ticket {
  accountId: string;
  version: number;
}

const FIELDS: (keyof TicketRecord)[] = [
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
  'createdAt',
  'updatedAt',
  'version',
];
// The ticket's own `type` is stored as `ticketType`: `type` names the item kind throughout the table.
const toRecord = (i: Record<string, unknown>) => {
  const r = Object.fromEntries(FIELDS.map((f) => [f, (f === 'type' ? i.ticketType : i[f]) ?? null])) as unknown as TicketRecord;
  r.tags ??= [];
  r.customFields ??= [];
  return r;
};

const rank = (list: readonly string[], v: string) => String(list.indexOf(v));

/** Sort keys: updated (gsi1), status in workflow order (gsi2), priority low..urgent (gsi3); the time-ordered id breaks ties. */
function item(t: TicketRecord) {
  const pk = keys.ticketsIndex(t.accountId);
  const { type: ticketType, ...rest } = t;
  return {
    ...keys.ticket(t.accountId, t.id),
    type: 'ticket',
    ticketType,
    ...rest,
    gsi1pk: pk,
    gsi1sk: `${t.updatedAt}#${t.id}`,
    gsi2pk: pk,
    gsi2sk: `${rank(TICKET_STATUSES, t.status)}#${t.id}`,
    gsi3pk: pk,
    gsi3sk: `${rank(TICKET_PRIORITIES, t.priority)}#${t.id}`,
  };
}

export async function getTicket(accountId: string, id: string): Promise<TicketRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.ticket(accountId, id) }));
  return out.Item ? toRecord(out.Item) : null;
}

/** Create a ticket with the writes that belong to it (option usage, outbox events) in one transaction. */
export async function createTicket(t: TicketRecord, related: TxWrite[]): Promise<void> {
  await transactWrite([{ item: { Put: { TableName: tableName(), Item: item(t), ConditionExpression: 'attribute_not_exists(pk)' } } }, ...related]);
}

/** Thrown when the ticket changed since it was read; the service re-reads and re-applies. */
export class StaleTicketError extends ConflictError {}

/** The write that replaces a ticket if it still has the version that was read (optimistic locking). */
export function replaceTicketWrite(next: TicketRecord, expectedVersion: number): TxWrite {
  return {
    item: { Put: { TableName: tableName(), Item: item(next), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': expectedVersion } } },
    onConditionFailed: () => new StaleTicketError('The ticket was changed concurrently'),
  };
}

/** Proves, inside another write's transaction, that the ticket is unchanged since it was read. */
export function ticketUnchangedCheck(t: TicketRecord): TxWrite {
  return {
    item: { ConditionCheck: { TableName: tableName(), Key: keys.ticket(t.accountId, t.id), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': t.version } } },
    onConditionFailed: () => new StaleTicketError('The ticket was changed concurrently'),
  };
}

export async function deleteTicket(t: TicketRecord, related: TxWrite[]): Promise<void> {
  await transactWrite([
    {
      item: { Delete: { TableName: tableName(), Key: keys.ticket(t.accountId, t.id), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': t.version } } },
      onConditionFailed: () => new StaleTicketError('The ticket was changed concurrently'),
    },
    ...related,
  ]);
}

export interface TicketFilter {
  status?: string;
  priority?: string;
  assigneeId?: string;
  sortBy: 'created_at' | 'updated_at' | 'status' | 'priority';
  order: 'asc' | 'desc';
}

const INDEX = { updated_at: 'gsi1', status: 'gsi2', priority: 'gsi3' } as const;

/** A page of tickets: base table for creation order (ids are time-ordered), gsi1..gsi3 for the other sorts. */
export async function listTickets(accountId: string, f: TicketFilter, limit: number, startKey?: Key) {
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
  const base: Omit<PageQuery, 'keyCondition' | 'values'> = { names, filter: filters.join(' AND ') || undefined, forward: f.order === 'asc', limit, startKey };
  const q: PageQuery =
    f.sortBy === 'created_at'
      ? { ...base, keyCondition: 'pk = :pk AND begins_with(sk, :p)', values: { ...values, ':pk': keys.accountPk(accountId), ':p': keys.ticketPrefix } }
      : { ...base, index: INDEX[f.sortBy], keyCondition: `${INDEX[f.sortBy]}pk = :pk`, values: { ...values, ':pk': keys.ticketsIndex(accountId) } };
  const page = await queryPage<Record<string, unknown>>(q);
  return { tickets: page.items.map(toRecord), nextKey: page.nextKey };
}

/** One page of ids of an account's tickets that are not closed: gsi2 sorts by status rank, closed last. */
export async function openTicketIdsPage(accountId: string, limit: number, startKey?: Key): Promise<{ ids: string[]; nextKey?: Key }> {
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :pk AND gsi2sk < :closed',
      ExpressionAttributeValues: { ':pk': keys.ticketsIndex(accountId), ':closed': rank(TICKET_STATUSES, 'closed') },
      ProjectionExpression: 'id',
      Limit: limit,
      ExclusiveStartKey: startKey,
    }),
  );
  return { ids: (out.Items ?? []).map((i) => i.id as string), nextKey: out.LastEvaluatedKey as Key | undefined };
}

/** gsi2 sort keys below the rank of `resolved`: new, open and pending tickets (status rank leads the key). */
const openCondition = () => ({ keyCondition: 'gsi2pk = :pk AND gsi2sk < :resolved', values: { ':resolved': rank(TICKET_STATUSES, 'resolved') } });

/** A page of the account's open tickets (new, open, pending), by status then age: a Query on gsi2, never a Scan. */
export async function listOpenTickets(accountId: string, limit: number, startKey?: Key) {
  const c = openCondition();
  const page = await queryPage<Record<string, unknown>>({
    index: 'gsi2',
    keyCondition: c.keyCondition,
    names: {},
    values: { ...c.values, ':pk': keys.ticketsIndex(accountId) },
    forward: true,
    limit,
    startKey,
  });
  return { tickets: page.items.map(toRecord), nextKey: page.nextKey };
}

/** How many open tickets the account has (counted on gsi2, up to `cap`). */
export async function countOpenTickets(accountId: string, cap: number): Promise<number> {
  const c = openCondition();
  return countMatches({ index: 'gsi2', keyCondition: c.keyCondition, names: {}, values: { ...c.values, ':pk': keys.ticketsIndex(accountId) } }, cap);
}
