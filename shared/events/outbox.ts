import { bindEntity, conditions } from '../db/entity.ts';
import { eventEntities } from '../db/entities/events.ts';
import { shardOf } from '../db/shard.ts';
import { OUTBOX_SHARDS } from '../db/table-definition.ts';
import type { TxWrite } from '../db/transact.ts';
import { newId } from '../ids.ts';
import { currentCorrelationId } from '../observability.ts';
import type { EventDetail } from './detail.ts';
import { boundDetail } from './entry-size.ts';

/** An outbox item as stored: the full EventBridge detail, fixed at write time so a republish is identical. */
export interface OutboxRecord {
  eventId: string;
  accountId: string;
  /** EventBridge source: the domain's own (support-desk.tickets, support-desk.messages, ...). */
  source: string;
  detailType: string;
  detail: EventDetail;
  createdAt: string;
}

/** The pending-outbox shard of an event: a stable spread of event ids over OUTBOX_SHARDS partitions. */
export const outboxShard = (eventId: string): number => shardOf(eventId, OUTBOX_SHARDS);

/** An outbox item: the record, and while the bus refuses it for good, why and since when (decisions §7 "parked"). */
export interface OutboxItem extends OutboxRecord {
  state?: 'parked';
  parkedAt?: string;
  parkReason?: string;
}

/**
 * Outbox items (this module's own: written here, read, parked and removed by
 * the publisher). The outbox index lists a pending item under its shard since
 * its creation, and a parked one under PARKED since it was parked.
 */
export const outboxItems = bindEntity<OutboxItem>(eventEntities.outbox, {
  fields: ['eventId', 'accountId', 'source', 'detailType', 'detail', 'createdAt', 'state', 'parkedAt', 'parkReason'],
  keyValues: (r) => (r.state === 'parked' ? { queue: 'PARKED', queuedAt: r.parkedAt } : { queue: `PENDING#${outboxShard(r.eventId)}`, queuedAt: r.createdAt }),
  normalize: ({ state, parkedAt, parkReason, ...r }) => (state === 'parked' ? { ...r, state, parkedAt: parkedAt ?? undefined, parkReason: parkReason ?? undefined } : r),
});

/** The event detail of a payload of a module's own shape (the id is minted here, once). */
export function newEventDetail<P extends Pick<EventDetail, 'event' | 'timestamp' | 'data'>>(accountId: string, payload: P): P & Pick<EventDetail, 'eventId' | 'accountId' | 'correlationId'> {
  return { eventId: newId('evt'), accountId, ...correlated(), ...payload };
}

const correlated = () => {
  const correlationId = currentCorrelationId();
  return correlationId ? { correlationId } : {};
};

/** A domain event of the common shape (ticket events add `actor`: newEventDetail). */
export function newDomainEvent(accountId: string, event: string, data: Record<string, unknown>, timestamp = new Date().toISOString()): EventDetail {
  return { eventId: newId('evt'), accountId, ...correlated(), event, timestamp, data };
}

/**
 * The writes that record events of `source` in the same transaction as the change
 * (transactional outbox). The table stream feeds the publisher; pending items
 * are also indexed (OUTBOX_INDEX, sharded) so a sweeper can republish anything
 * a crash left behind. Each event is bounded here, once, so that it is
 * publishable whatever the ticket holds and every republish is identical.
 */
export function outboxWrites(details: EventDetail[], source: string): TxWrite[] {
  return details.map((given) => {
    const detail = boundDetail(given, source);
    const record: OutboxRecord = { eventId: detail.eventId, accountId: detail.accountId, source, detailType: detail.event, detail, createdAt: detail.timestamp };
    return outboxItems.put(record, conditions.absent());
  });
}
