import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '../logger.ts';
import { correlationIdFrom, withCorrelation } from '../observability.ts';
import type { EventDetail } from './outbox.ts';

/** The EventBridge event as an SQS target receives it (the message body). */
export interface BusEnvelope {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: EventDetail;
}

/**
 * An SQS consumer of bus events: each record's EventBridge envelope is parsed
 * and handled on its own; failures are reported per record
 * (reportBatchItemFailures) so only those are retried, then dead-lettered.
 */
export function eventConsumer(name: string, handle: (detail: EventDetail, envelope: BusEnvelope) => Promise<void>) {
  return async function consume(event: SQSEvent): Promise<SQSBatchResponse> {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      let envelope: BusEnvelope;
      try {
        envelope = JSON.parse(record.body) as BusEnvelope;
      } catch (err) {
        // A body that is not JSON will never parse: retrying cannot help, so it goes to the DLQ via its receive count.
        logger.error(`${name}: unparseable message`, { messageId: record.messageId, err });
        batchItemFailures.push({ itemIdentifier: record.messageId });
        continue;
      }
      try {
        // The event's correlation id (from the API request that caused it) follows it into this consumer's logs.
        await withCorrelation(correlationIdFrom(envelope.detail?.correlationId), () => handle(envelope.detail, envelope));
      } catch (err) {
        logger.error(`${name}: handling failed`, { messageId: record.messageId, eventId: envelope.detail?.eventId, err });
        batchItemFailures.push({ itemIdentifier: record.messageId });
      }
    }
    return { batchItemFailures };
  };
}
