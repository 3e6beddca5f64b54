import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../logger.ts';
import { correlationIdFrom, withCorrelation } from '../observability.ts';
import { pipelineEnv } from './env.ts';
import { emitMetric, METRICS } from './metrics.ts';
import type { EventDetail } from './outbox.ts';
import { queueUrlFromArn, sqs } from './sqs.ts';

/** The EventBridge event as an SQS target receives it (the message body). */
export interface BusEnvelope {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: EventDetail;
}

/** Records of a batch handled at once: independent events, each idempotent by event id. */
const RECORD_CONCURRENCY = 10;

/**
 * Hand a failed message back after a short, growing delay instead of the
 * queue's visibility timeout (minutes): a transient failure is retried soon,
 * and a message that fails every time reaches the DLQ (maxReceiveCount) in
 * seconds rather than after maxReceiveCount visibility timeouts, while the
 * rest of the queue keeps flowing. Best effort: without it the queue's own
 * timeout applies.
 */
export async function backOff(name: string, record: SQSRecord): Promise<void> {
  const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  const delay = Math.round(Math.min(300, pipelineEnv().CONSUMER_RETRY_BASE_SECONDS * 2 ** (receives - 1)));
  try {
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrlFromArn(record.eventSourceARN), ReceiptHandle: record.receiptHandle, VisibilityTimeout: delay }));
  } catch (err) {
    logger.warn(`${name}: could not schedule the retry`, { messageId: record.messageId, err });
  }
}

/**
 * An SQS consumer of bus events: each record's EventBridge envelope is parsed
 * and handled on its own (records of a batch concurrently); failures are
 * reported per record (reportBatchItemFailures) so only those are retried,
 * with backoff, then dead-lettered (parked) by the queue's redrive policy.
 * One message that fails every time never holds up the others.
 */
export function eventConsumer(name: string, handle: (detail: EventDetail, envelope: BusEnvelope) => Promise<void>) {
  async function consumeOne(record: SQSRecord): Promise<boolean> {
    let envelope: BusEnvelope;
    try {
      envelope = JSON.parse(record.body) as BusEnvelope;
    } catch (err) {
      // A body that is not JSON will never parse: retrying cannot help, so it goes to the DLQ via its receive count.
      logger.error(`${name}: unparseable message`, { messageId: record.messageId, err });
      return false;
    }
    try {
      // The event's correlation id (from the API request that caused it) follows it into this consumer's logs.
      await withCorrelation(correlationIdFrom(envelope.detail?.correlationId), () => handle(envelope.detail, envelope));
      return true;
    } catch (err) {
      logger.error(`${name}: handling failed`, { messageId: record.messageId, eventId: envelope.detail?.eventId, receives: record.attributes?.ApproximateReceiveCount, err });
      return false;
    }
  }
  return async function consume(event: SQSEvent): Promise<SQSBatchResponse> {
    const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
    const records = [...event.Records];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(RECORD_CONCURRENCY, records.length) }, async () => {
        while (next < records.length) {
          const record = records[next++];
          if (await consumeOne(record)) continue;
          batchItemFailures.push({ itemIdentifier: record.messageId });
          await backOff(name, record);
        }
      }),
    );
    if (batchItemFailures.length) emitMetric(METRICS.consumerFailures, batchItemFailures.length);
    return { batchItemFailures };
  };
}
