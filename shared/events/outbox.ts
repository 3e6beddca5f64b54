import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import type { TxWrite } from '../db/transact.ts';
import { newId } from '../ids.ts';
import { currentCorrelationId } from '../observability.ts';
import { TICKET_EVENT_SOURCE, type TicketEventDetail, type TicketEventPayload } from './ticket-events.ts';

/** Any event recorded through the outbox: ticket events, and the other domains' own (organization.created, message.created). */
export interface EventDetail {
  eventId: string;
  accountId: string;
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** The request (x-request-id) or event that caused this one, so it can be followed to the receiver. */
  correlationId?: string;
}

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
 * are also indexed (gsi4) so a sweeper can republish anything a crash left behind.
 */
export function outboxWrites(details: EventDetail[], source: string = TICKET_EVENT_SOURCE): TxWrite[] {
  return details.map((detail) => {
    const record: OutboxRecord = { eventId: detail.eventId, accountId: detail.accountId, source, detailType: detail.event, detail, createdAt: detail.timestamp };
    const item: NonNullable<TransactWriteCommandInput['TransactItems']>[number] = {
      Put: {
        TableName: tableName(),
        Item: { ...keys.outbox(detail.accountId, detail.eventId), type: 'outbox', ...record, gsi4pk: keys.outboxPending, gsi4sk: `${record.createdAt}#${record.eventId}` },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    };
    return { item };
  });
}
