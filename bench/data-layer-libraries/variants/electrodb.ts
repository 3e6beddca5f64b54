/**
 * The contact declared in ElectroDB, keeping today's key strings (templates,
 * casing 'none'). Three things ElectroDB will not take as they are, each
 * worked around here and counted in docs/decisions.md:
 * - a nullable attribute (organizationId, notes: null on disk) must be `any`:
 *   a `string` attribute refuses null;
 * - an `any` attribute cannot be a key composite, and a key cannot lowercase
 *   one composite only (textSortKey lowercases the name, not the id), so gsi1sk,
 *   gsi2sk and gsi3pk are declared as attributes computed from others and used
 *   as the whole key field;
 * - every item it writes also carries `__edb_e__`/`__edb_v__` (ownership).
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Entity, Service } from 'electrodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '../../../shared/domain/errors.ts';
import { keys, textSortKey, type ContactRecord, type Variant } from '../common.ts';

type Any = any;

export function createElectro(client: DynamoDBDocumentClient, table: string) {
  const contact = new Entity(
    {
      model: { entity: 'contact', version: '1', service: 'desk' },
      attributes: {
        accountId: { type: 'string', required: true, readOnly: true },
        id: { type: 'string', required: true, readOnly: true },
        type: { type: 'string', readOnly: true, default: 'contact' },
        name: { type: 'string', required: true },
        email: { type: 'string', required: true },
        organizationId: { type: 'any' },
        notes: { type: 'any' },
        createdAt: { type: 'string', required: true },
        updatedAt: { type: 'string', required: true },
        version: { type: 'number', required: true },
        gsi1sk: { type: 'string', hidden: true, watch: ['name', 'id'], set: (_: unknown, c: Any) => textSortKey(c.name, c.id) },
        gsi2sk: { type: 'string', hidden: true, watch: ['email', 'id'], set: (_: unknown, c: Any) => textSortKey(c.email, c.id) },
        gsi3pk: {
          type: 'string',
          hidden: true,
          watch: ['organizationId', 'accountId'],
          set: (_: unknown, c: Any) => (c.organizationId ? keys.orgContactsIndex(c.accountId, c.organizationId) : undefined),
        },
        searchText: { type: 'string', hidden: true, watch: ['name', 'email'], set: (_: unknown, c: Any) => `${c.name.toLowerCase()}\n${c.email.toLowerCase()}` },
      },
      indexes: {
        primary: {
          pk: { field: 'pk', composite: ['accountId'], template: 'A#${accountId}', casing: 'none' },
          sk: { field: 'sk', composite: ['id'], template: 'CONTACT#${id}', casing: 'none' },
        },
        byName: {
          index: 'gsi1',
          pk: { field: 'gsi1pk', composite: ['accountId'], template: 'A#${accountId}#CONTACTS', casing: 'none' },
          sk: { field: 'gsi1sk', composite: ['gsi1sk'], template: '${gsi1sk}', casing: 'none' },
        },
        byEmail: {
          index: 'gsi2',
          pk: { field: 'gsi2pk', composite: ['accountId'], template: 'A#${accountId}#CONTACTS', casing: 'none' },
          sk: { field: 'gsi2sk', composite: ['gsi2sk'], template: '${gsi2sk}', casing: 'none' },
        },
        byOrganization: {
          index: 'gsi3',
          pk: { field: 'gsi3pk', composite: ['gsi3pk'], template: '${gsi3pk}', casing: 'none' },
          sk: { field: 'gsi3sk', composite: ['id'], template: '${id}', casing: 'none' },
        },
      },
    } as const,
    { table, client },
  );

  // Guard and counter items hold no attributes of their key's parts today: their key fields are attributes themselves (keys.ts builds them).
  const byKey = {
    primary: {
      pk: { field: 'pk', composite: ['pk'], template: '${pk}', casing: 'none' },
      sk: { field: 'sk', composite: ['sk'], template: '${sk}', casing: 'none' },
    },
  } as const;
  const keyAttributes = { pk: { type: 'string', required: true, readOnly: true }, sk: { type: 'string', required: true, readOnly: true } } as const;

  const contactEmail = new Entity(
    {
      model: { entity: 'contactEmail', version: '1', service: 'desk' },
      attributes: { ...keyAttributes, type: { type: 'string', readOnly: true, default: 'contactEmail' }, contactId: { type: 'string', required: true }, organizationId: { type: 'any' } },
      indexes: byKey,
    } as const,
    { table, client },
  );
  const listCounter = new Entity({ model: { entity: 'listCounter', version: '1', service: 'desk' }, attributes: { ...keyAttributes, n: { type: 'number' } }, indexes: byKey } as const, {
    table,
    client,
  });
  const requesterTickets = new Entity({ model: { entity: 'requesterTickets', version: '1', service: 'desk' }, attributes: { ...keyAttributes, count: { type: 'number' } }, indexes: byKey } as const, {
    table,
    client,
  });

  // Transactions across entities are a Service's.
  const service = new Service({ contact, contactEmail, listCounter, requesterTickets }, { table, client });

  /** One transaction item: built from the service's transaction entities, and the domain error its failed condition means. */
  interface ElectroTx {
    build: (e: Any) => Any;
    onConditionFailed?: () => Error;
  }

  /**
   * transactWrite on ElectroDB: it answers a cancellation as `{ canceled: true,
   * data: [{ rejected, code, message }] }` (one entry per item, in order), so the
   * failed index maps to its write's domain error as today; TransactionConflict
   * retried the same way.
   */
  async function transact(writes: ElectroTx[], seen?: (codes: string[]) => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const out = await service.transaction.write((e: Any) => writes.map((w) => w.build(e))).go();
      if (!out.canceled) return;
      const reasons = out.data as { code: string }[];
      seen?.(reasons.map((r) => r.code));
      const failed = reasons.findIndex((r) => r.code === 'ConditionalCheckFailed');
      if (failed >= 0) throw writes[failed]?.onConditionFailed?.() ?? new ConflictError('The resource was changed concurrently; retry the request');
      const conflict = reasons.some((r) => r.code === 'TransactionConflict');
      if (!conflict || attempt >= 8) throw conflict ? new ConflictError('The resource is busy; retry the request') : new Error(`transaction canceled: ${JSON.stringify(reasons)}`);
      await sleep(Math.random() * 20 * 2 ** attempt);
    }
  }

  const variant: Variant = {
    async createContact(c) {
      await transact([
        { build: (e: Any) => e.contact.create(c).commit() },
        { build: (e: Any) => e.contactEmail.create({ ...keys.contactEmail(c.accountId, c.email), contactId: c.id, organizationId: c.organizationId }).commit() },
        { build: (e: Any) => e.listCounter.update(keys.listCounter(c.accountId, 'CONTACTS')).add({ n: 1 }).commit() },
      ]);
    },
    async getContact(accountId, id) {
      const out = await contact.get({ accountId, id }).go();
      return (out.data as ContactRecord | null) ?? null;
    },
    async listByName(accountId, limit, cursor) {
      const out = await contact.query.byName({ accountId }).go({ limit, cursor: (cursor as string | undefined) ?? null });
      return { items: out.data as ContactRecord[], cursor: out.cursor ?? undefined };
    },
  };
  return { variant, service, transact, entities: { contact, contactEmail, listCounter, requesterTickets } };
}
