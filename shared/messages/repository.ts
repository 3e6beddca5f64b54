import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { listCounter } from '../db/list-counter.ts';
import { batchDelete, numberedPage, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import type { StoredAttachment } from '../attachments/model.ts';
import type { Message } from './model.ts';

/** A message as stored: its attachments carry their object keys, the API's download URLs are made on each read. */
export interface MessageRecord extends Omit<Message, 'attachments'> {
  accountId: string;
  sendEmail: boolean;
  attachments: StoredAttachment[];
}

const strip = ({ pk: _p, sk: _s, type: _t, messageType, ...rest }: Record<string, unknown>) => ({ ...rest, type: messageType }) as unknown as MessageRecord;

/** Messages never change, so the copy by id and the copy under the ticket cannot drift; both commit with `related`. */
export async function createMessage(m: MessageRecord, related: TxWrite[]): Promise<void> {
  const { type: messageType, ...rest } = m;
  const body = { type: 'message', messageType, ...rest };
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: { ...keys.message(m.accountId, m.id), ...body }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    { item: { Put: { TableName: tableName(), Item: { ...keys.ticketMessage(m.accountId, m.ticketId, m.id), ...body }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    listCounter.write(m.accountId, `TMSG#${m.ticketId}`, 1),
    ...related,
  ]);
}

export async function getMessage(accountId: string, id: string): Promise<MessageRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.message(accountId, id) }));
  return out.Item ? strip(out.Item) : null;
}

/** A numbered page of a ticket's messages in time order (ids are time-ordered), with the total. */
export async function listMessages(accountId: string, ticketId: string, forward: boolean, page: number, limit: number) {
  const r = await numberedPage<Record<string, unknown>>(
    { keyCondition: 'pk = :pk AND begins_with(sk, :p)', names: {}, values: { ':pk': keys.accountPk(accountId), ':p': keys.ticketMessagePrefix(ticketId) }, forward },
    page,
    limit,
    // The ticket's message counter (written with each message), read beside the page.
    listCounter.read(accountId, `TMSG#${ticketId}`),
  );
  return { items: r.items.map(strip), total: r.total };
}

/** The oldest `limit` messages still stored under a ticket (its copies under the ticket), for clearing a deleted ticket. */
export async function ticketMessages(accountId: string, ticketId: string, limit: number): Promise<MessageRecord[]> {
  const out = await ddb.send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
      ExpressionAttributeValues: { ':pk': keys.accountPk(accountId), ':p': keys.ticketMessagePrefix(ticketId) },
      Limit: limit,
    }),
  );
  return (out.Items ?? []).map(strip);
}

/**
 * Delete a deleted ticket's messages: first what readers reach (each message
 * by id, its attachments by id), then the copies under the ticket, which are
 * how a retry finds the rest. Idempotent; not a transaction (nothing reads
 * them any more: the ticket is gone and takes no new messages).
 */
export async function deleteTicketMessages(accountId: string, ticketId: string, messages: readonly MessageRecord[], attachmentKeys: (m: MessageRecord) => Key[]): Promise<void> {
  await batchDelete(messages.flatMap((m) => [keys.message(accountId, m.id), ...attachmentKeys(m)]));
  await batchDelete(messages.map((m) => keys.ticketMessage(accountId, ticketId, m.id)));
}

/** The ticket's message counter, once its messages are gone. */
export const deleteMessageCounter = (accountId: string, ticketId: string) => batchDelete([keys.listCounter(accountId, `TMSG#${ticketId}`)]);
