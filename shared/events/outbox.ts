import { bindEntity, conditions } from '../db/entity.ts';
import { ENTITIES } from '../db/keys.ts';
import { shardOf } from '../db/shard.ts';
import { OUTBOX_SHARDS } from '../db/table-definition.ts';
import type { TxWrite } from '../db/transact.ts';
import { newId } from '../ids.ts';
import { currentCorrelationId } from '../observability.ts';
import type { EventDetail } from './detail.ts';
import { boundDetail } from './entry-size.ts';
import { TICKET_EVENT_SOURCE } from './ticket-event-names.ts';
import type { TicketEventDetail, TicketEventPayload } from './ticket-events.ts';

/** An outbox item as stored: the full EventBridge detail, fixed at write time so a republish is identical. */
export interface OutboxRecord {
  eventId: string;
  accountId: string;
  /** EventBridge source: support-desk.tickets unless the domain says otherwise. */
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
export const outboxItems = bindEntity<OutboxItem>(ENTITIES.outbox, {
  fields: ['eventId', 'accountId', 'source', 'detailType', 'detail', 'createdAt', 'state', 'parkedAt', 'parkReason'],
  keyValues: (r) => (r.state === 'parked' ? { queue: 'PARKED', queuedAt: r.parkedAt } : { queue: `PENDING#${outboxShard(r.eventId)}`, queuedAt: r.createdAt }),
  normalize: ({ state, parkedAt, parkReason, ...r }) => (state === 'parked' ? { ...r, state, parkedAt: parkedAt ?? undefined, parkReason: parkReason ?? undefined } : r),
});

/** Build the event detail for a payload (the id is minted here, once). */
export function newEventDetail(accountId: string, payload: TicketEventPayload): TicketEventDetail {
  return { eventId: newId('evt'), accountId, ...correlated(), ...payload } as TicketEventDetail;
}

const correlated = () => {
  const correlationId = currentCorrelationId();
  return correlationId ? { correlationId } : {};
};

/** A non-ticket domain event (same id scheme and shape). */
export function newDomainEvent(accountId: string, event: string, data: Record<string, unknown>, timestamp = new Date().toISOString()): EventDetail {
  return { eventId: newId('evt'), accountId, ...correlated(), event, timestamp, data };
}

/**
 * The writes that record events in the same transaction as the ticket change
 * (transactional outbox). The table stream feeds the publisher; pending items
 * are also indexed (OUTBOX_INDEX, sharded) so a sweeper can republish anything
 * a crash left behind. Each event is bounded here, once, so that it is
 * publishable whatever the ticket holds and every republish is identical.
 */
export function outboxWrites(details: EventDetail[], source: string = TICKET_EVENT_SOURCE): TxWrite[] {
  return details.map((given) => {
    const detail = boundDetail(given, source);
    const record: OutboxRecord = { eventId: detail.eventId, accountId: detail.accountId, source, detailType: detail.event, detail, createdAt: detail.timestamp };
    return outboxItems.put(record, conditions.absent());
  });
}
