import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import type { TxWrite } from '../db/transact.ts';
import { newId } from '../ids.ts';
import type { TicketEventDetail, TicketEventPayload } from './ticket-events.ts';

/** An outbox item as stored: the full EventBridge detail, fixed at write time so a republish is identical. */
export interface OutboxRecord {
  eventId: string;
  accountId: string;
  detailType: TicketEventDetail['event'];
  detail: TicketEventDetail;
  createdAt: string;
}

/** Build the event detail for a payload (the id is minted here, once). */
export function newEventDetail(accountId: string, payload: TicketEventPayload): TicketEventDetail {
  return { eventId: newId('evt'), accountId, ...payload } as TicketEventDetail;
}

/**
 * The writes that record events in the same transaction as the ticket change
 * (transactional outbox). The table stream feeds the publisher; pending items
 * are also indexed (gsi4) so a sweeper can republish anything a crash left behind.
 */
export function outboxWrites(details: TicketEventDetail[]): TxWrite[] {
  return details.map((detail) => {
    const record: OutboxRecord = { eventId: detail.eventId, accountId: detail.accountId, detailType: detail.event, detail, createdAt: detail.timestamp };
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
