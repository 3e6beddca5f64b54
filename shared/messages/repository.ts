import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { counterWrite, numberedPage, readCounter } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import type { Message } from './model.ts';

export interface MessageRecord extends Message {
  accountId: string;
  sendEmail: boolean;
}

const strip = ({ pk: _p, sk: _s, type: _t, messageType, ...rest }: Record<string, unknown>) => ({ ...rest, type: messageType }) as unknown as MessageRecord;

/** Messages never change, so the copy by id and the copy under the ticket cannot drift; both commit with `related`. */
export async function createMessage(m: MessageRecord, related: TxWrite[]): Promise<void> {
  const { type: messageType, ...rest } = m;
  const body = { type: 'message', messageType, ...rest };
  await transactWrite([
    { item: { Put: { TableName: tableName(), Item: { ...keys.message(m.accountId, m.id), ...body }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    { item: { Put: { TableName: tableName(), Item: { ...keys.ticketMessage(m.accountId, m.ticketId, m.id), ...body }, ConditionExpression: 'attribute_not_exists(pk)' } } },
    counterWrite(keys.listCounter(m.accountId, `TMSG#${m.ticketId}`), 1),
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
    readCounter(keys.listCounter(accountId, `TMSG#${ticketId}`)),
  );
  return { items: r.items.map(strip), total: r.total };
}
