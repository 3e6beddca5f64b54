/**
 * Today's layer: the contact built as shared/contacts/repository.ts builds it
 * (item() composes the index attributes, key builders from keys.ts), read with
 * plain lib-dynamodb commands, paged as shared/db/query.ts queryPage pages, and
 * written with shared/db/transact.ts transactWrite (TxWrite: the write and the
 * domain error its failed condition means; TransactionConflict retried).
 */
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, QueryCommand, TransactWriteCommand, type DynamoDBDocumentClient, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { AlreadyExistsError, ConflictError } from '../../../shared/domain/errors.ts';
import { keys, textSortKey, type ContactRecord, type Page, type Variant } from '../common.ts';

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];
export interface TxWrite {
  item: TransactItem;
  onConditionFailed?: () => Error;
}

/** shared/db/transact.ts transactWrite, less the store-limit mapping (never reached here); `seen` gets the per-item codes of a cancellation. */
export async function transactWrite(ddb: DynamoDBDocumentClient, writes: TxWrite[], seen?: (codes: string[]) => void): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await ddb.send(new TransactWriteCommand({ TransactItems: writes.map((w) => w.item) }));
      return;
    } catch (err) {
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons ?? [];
      seen?.(reasons.map((r) => r.Code ?? ''));
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed >= 0) throw writes[failed]?.onConditionFailed?.() ?? new ConflictError('The resource was changed concurrently; retry the request', { cause: err });
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict');
      if (!conflict || attempt >= 8) throw conflict ? new ConflictError('The resource is busy; retry the request', { cause: err }) : err;
      await sleep(Math.random() * 20 * 2 ** attempt);
    }
  }
}

const FIELDS: (keyof ContactRecord)[] = ['id', 'accountId', 'name', 'email', 'organizationId', 'notes', 'createdAt', 'updatedAt', 'version'];
export const toRecord = (i: Record<string, unknown>) => Object.fromEntries(FIELDS.map((f) => [f, i[f] ?? null])) as unknown as ContactRecord;

export function contactItem(c: ContactRecord) {
  const pk = keys.contactsIndex(c.accountId);
  return {
    ...keys.contact(c.accountId, c.id),
    type: 'contact',
    ...c,
    gsi1pk: pk,
    gsi1sk: textSortKey(c.name, c.id),
    gsi2pk: pk,
    gsi2sk: textSortKey(c.email, c.id),
    ...(c.organizationId ? { gsi3pk: keys.orgContactsIndex(c.accountId, c.organizationId), gsi3sk: c.id } : {}),
    searchText: `${c.name.toLowerCase()}\n${c.email.toLowerCase()}`,
  };
}

export function createToday(ddb: DynamoDBDocumentClient, TableName: string) {
  const contactPut = (c: ContactRecord): TxWrite => ({ item: { Put: { TableName, Item: contactItem(c), ConditionExpression: 'attribute_not_exists(pk)' } } });
  const guardPut = (c: ContactRecord): TxWrite => ({
    item: {
      Put: {
        TableName,
        Item: { ...keys.contactEmail(c.accountId, c.email), type: 'contactEmail', contactId: c.id, organizationId: c.organizationId },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    onConditionFailed: () => new AlreadyExistsError(`A contact with email ${c.email} already exists`),
  });
  const counterWrite = (accountId: string, delta: number): TxWrite => ({
    item: { Update: { TableName, Key: keys.listCounter(accountId, 'CONTACTS'), UpdateExpression: 'ADD #n :d', ExpressionAttributeNames: { '#n': 'n' }, ExpressionAttributeValues: { ':d': delta } } },
  });

  const variant: Variant = {
    async createContact(c) {
      await transactWrite(ddb, [contactPut(c), guardPut(c), counterWrite(c.accountId, 1)]);
    },
    async getContact(accountId, id) {
      const out = await ddb.send(new GetCommand({ TableName, Key: keys.contact(accountId, id) }));
      return out.Item ? toRecord(out.Item) : null;
    },
    // queryPage without a filter: one Query of limit+1 (exact "more"), the position after the limit-th item.
    async listByName(accountId, limit, cursor) {
      const items: Record<string, unknown>[] = [];
      let startKey = cursor as Record<string, unknown> | undefined;
      do {
        const out = await ddb.send(
          new QueryCommand({
            TableName,
            IndexName: 'gsi1',
            KeyConditionExpression: 'gsi1pk = :pk',
            ExpressionAttributeValues: { ':pk': keys.contactsIndex(accountId) },
            ScanIndexForward: true,
            ExclusiveStartKey: startKey,
            Limit: limit + 1 - items.length,
          }),
        );
        items.push(...(out.Items ?? []));
        startKey = out.LastEvaluatedKey;
      } while (startKey && items.length <= limit);
      if (items.length <= limit) return { items: items.map(toRecord), cursor: startKey };
      const page = items.slice(0, limit);
      const last = page[page.length - 1];
      return { items: page.map(toRecord), cursor: Object.fromEntries(['pk', 'sk', 'gsi1pk', 'gsi1sk'].map((a) => [a, String(last[a])])) } satisfies Page;
    },
  };
  return { variant, contactPut, guardPut, counterWrite };
}
