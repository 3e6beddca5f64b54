import { declareEntity } from '../declaration.ts';

export const eventEntities = {
  outbox: declareEntity({
    personal: ['detail'],
    type: 'outbox',
    owner: 'events',
    description:
      'A domain event written in the transaction of its change (transactional outbox): the full EventBridge entry, fixed at write time; removed once published, parked (`state`, `parkedAt`, `parkReason`) when the bus refuses it for good.',
    key: { pk: 'A#{accountId}', sk: 'OUTBOX#{eventId}' },
    indexes: {
      queue: {
        slot: 'outbox',
        pk: 'OUTBOX_{queue}',
        sk: '{queuedAt}#{eventId}',
        pattern:
          'The outbox sweeper and its age alarm: pending items (`queue` = `PENDING#<shard>`, 8 shards by event id, since createdAt), oldest first; the admin CLI: parked items (`queue` = `PARKED`, since parkedAt). Keys only.',
      },
    },
  }),
};
