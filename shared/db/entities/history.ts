import { declareEntity } from '../declaration.ts';

/**
 * The history of an account (decisions §15): audits, written in the
 * transaction of the change they record, and tombstones of deleted records
 * for the incremental export. The records' own change index (`changes`, gsi4)
 * is declared with each exported entity.
 */
export const historyEntities = {
  audit: declareEntity({
    personal: ['changes'],
    type: 'audit',
    owner: 'audits',
    description:
      "One committed change of a ticket or an account setting: who (`actorType`, `actorId`), how (`via`), what (`changes`). A resource's audits sort by `seq` (a ticket's version, so commit order even across writers' clocks), then the time-ordered id. Expires after the stage's auditRetentionDays.",
    key: { pk: 'A#{accountId}#AUD#{resourceType}#{resourceId}', sk: '{seq}#{id}' },
    expires: true,
    indexes: {
      byResource: { slot: 'table', pk: 'A#{accountId}#AUD#{resourceType}#{resourceId}', sk: '{seq}#{id}', pattern: 'GET /v1/tickets/{id}/audits; GET /v1/audits?resource_type=…&resource_id=…' },
      byAccount: {
        slot: 'gsi1',
        pk: 'A#{accountId}#AUDITS#{shard}',
        sk: '{createdAt}#{id}',
        pattern: 'GET /v1/audits (since/until: a sort-key range), 8 write shards by audit id merged in order',
      },
      byActor: { slot: 'gsi2', pk: 'A#{accountId}#AUDACTOR#{actorId}#{shard}', sk: '{createdAt}#{id}', pattern: 'GET /v1/audits?actor_id=… (sparse: audits with an actor id)' },
      byType: { slot: 'gsi3', pk: 'A#{accountId}#AUDTYPE#{resourceType}#{shard}', sk: '{createdAt}#{id}', pattern: 'GET /v1/audits?resource_type=…' },
    },
  }),
  tombstone: declareEntity({
    personal: [],
    type: 'tombstone',
    owner: 'exports',
    description: 'A deleted ticket, contact, organization or user, for the incremental export (`updatedAt` is the deletion time). Written in the transaction of the delete; expires after 30 days.',
    key: { pk: 'A#{accountId}', sk: 'TOMB#{kind}#{id}' },
    expires: true,
    indexes: {
      changes: { slot: 'gsi4', pk: 'A#{accountId}#CHG#{kind}#{changeShard}', sk: '{updatedAt}#{id}', pattern: 'GET /v1/exports/{resource}: the deletes, merged with the records of the same kind' },
    },
  }),
};
