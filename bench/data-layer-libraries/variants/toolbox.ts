/**
 * The contact declared in DynamoDB-Toolbox v2: index attributes linked from
 * the record's own (`.link`), the key computed by today's key builders, no
 * entity attribute and no timestamps, so the items on disk are today's to the
 * byte. Nullable attributes are `anyOf(string(), nul())`.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { $add, anyOf, Entity, executeTransactWrite, GetItemCommand, isTransactionCancelled, item, nul, number, PutTransaction, QueryCommand, string, Table, UpdateTransaction } from 'dynamodb-toolbox';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '../../../shared/domain/errors.ts';
import { keys, textSortKey, type ContactRecord, type Variant } from '../common.ts';

export function createToolbox(documentClient: DynamoDBDocumentClient, name: string) {
  const table = new Table({
    name,
    documentClient,
    partitionKey: { name: 'pk', type: 'string' },
    sortKey: { name: 'sk', type: 'string' },
    indexes: {
      gsi1: { type: 'global', partitionKey: { name: 'gsi1pk', type: 'string' }, sortKey: { name: 'gsi1sk', type: 'string' } },
      gsi2: { type: 'global', partitionKey: { name: 'gsi2pk', type: 'string' }, sortKey: { name: 'gsi2sk', type: 'string' } },
      gsi3: { type: 'global', partitionKey: { name: 'gsi3pk', type: 'string' }, sortKey: { name: 'gsi3sk', type: 'string' } },
    },
  });

  const record = item({
    accountId: string().key(),
    id: string().key(),
    type: string().const('contact').default('contact'),
    name: string(),
    email: string(),
    organizationId: anyOf(string(), nul()),
    notes: anyOf(string(), nul()),
    createdAt: string(),
    updatedAt: string(),
    version: number(),
  });
  const contactSchema = record.and((_prev) => ({
    gsi1pk: string()
      .hidden()
      .link<typeof _prev>(({ accountId }) => keys.contactsIndex(accountId)),
    gsi1sk: string()
      .hidden()
      .link<typeof _prev>(({ name, id }) => textSortKey(name, id)),
    gsi2pk: string()
      .hidden()
      .link<typeof _prev>(({ accountId }) => keys.contactsIndex(accountId)),
    gsi2sk: string()
      .hidden()
      .link<typeof _prev>(({ email, id }) => textSortKey(email, id)),
    gsi3pk: string()
      .optional()
      .hidden()
      .link<typeof _prev>(({ accountId, organizationId }) => (organizationId ? keys.orgContactsIndex(accountId, organizationId) : undefined)),
    gsi3sk: string()
      .optional()
      .hidden()
      .link<typeof _prev>(({ id, organizationId }) => (organizationId ? id : undefined)),
    searchText: string()
      .hidden()
      .link<typeof _prev>(({ name, email }) => `${name.toLowerCase()}\n${email.toLowerCase()}`),
  }));
  const contact = new Entity({
    name: 'contact',
    table,
    schema: contactSchema,
    entityAttribute: false,
    timestamps: false,
    computeKey: ({ accountId, id }: { accountId: string; id: string }) => keys.contact(accountId, id),
  });

  // Guard and counter items hold no attributes of their key's parts today: their schemas take the key itself (keys.ts builds it).
  const contactEmail = new Entity({
    name: 'contactEmail',
    table,
    schema: item({
      pk: string().key(),
      sk: string().key(),
      type: string().const('contactEmail').default('contactEmail'),
      contactId: string(),
      organizationId: anyOf(string(), nul()),
    }),
    entityAttribute: false,
    timestamps: false,
  });

  const listCounter = new Entity({
    name: 'listCounter',
    table,
    schema: item({ pk: string().key(), sk: string().key(), n: number().optional() }),
    entityAttribute: false,
    timestamps: false,
  });

  const requesterTickets = new Entity({
    name: 'requesterTickets',
    table,
    schema: item({ pk: string().key(), sk: string().key(), count: number().optional() }),
    entityAttribute: false,
    timestamps: false,
  });

  type Tx = Extract<Parameters<typeof executeTransactWrite>[number], { params: unknown }>;
  /** One transaction item and the domain error its failed condition means. */
  interface ToolboxTx {
    tx: Tx;
    onConditionFailed?: () => Error;
  }

  /**
   * transactWrite on the Toolbox: it lets the SDK's TransactionCanceledException
   * through, CancellationReasons in item order, so the failed index maps to its
   * write's domain error as today; TransactionConflict retried the same way.
   */
  async function transact(writes: ToolboxTx[], seen?: (codes: string[]) => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await executeTransactWrite(...writes.map((w) => w.tx));
        return;
      } catch (err) {
        if (!isTransactionCancelled(err)) throw err;
        const reasons = (err as { CancellationReasons?: { Code?: string }[] }).CancellationReasons ?? [];
        seen?.(reasons.map((r) => r.Code ?? ''));
        const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
        if (failed >= 0) throw writes[failed]?.onConditionFailed?.() ?? new ConflictError('The resource was changed concurrently; retry the request', { cause: err });
        const conflict = reasons.some((r) => r.Code === 'TransactionConflict');
        if (!conflict || attempt >= 8) throw conflict ? new ConflictError('The resource is busy; retry the request', { cause: err }) : err;
        await sleep(Math.random() * 20 * 2 ** attempt);
      }
    }
  }

  const variant: Variant = {
    async createContact(c) {
      await transact([
        {
          tx: contact
            .build(PutTransaction)
            .item(c)
            .options({ condition: { attr: 'id', exists: false } }),
        },
        {
          tx: contactEmail
            .build(PutTransaction)
            .item({ ...keys.contactEmail(c.accountId, c.email), contactId: c.id, organizationId: c.organizationId })
            .options({ condition: { attr: 'pk', exists: false } }),
        },
        { tx: listCounter.build(UpdateTransaction).item({ ...keys.listCounter(c.accountId, 'CONTACTS'), n: $add(1) }) },
      ]);
    },
    async getContact(accountId, id) {
      const out = await contact.build(GetItemCommand).key({ accountId, id }).send();
      return (out.Item as ContactRecord | undefined) ?? null;
    },
    async listByName(accountId, limit, cursor) {
      const out = await table
        .build(QueryCommand)
        .entities(contact)
        .query({ index: 'gsi1', partition: keys.contactsIndex(accountId) })
        .options({ limit, ...(cursor ? { exclusiveStartKey: cursor as Record<string, string> } : {}) })
        .send();
      return { items: out.Items as ContactRecord[], cursor: out.LastEvaluatedKey };
    },
  };
  return { variant, transact, table, entities: { contact, contactEmail, listCounter, requesterTickets } };
}
