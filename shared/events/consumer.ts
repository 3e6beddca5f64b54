import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { logger } from '../logger.ts';
import { correlationIdFrom, recordMetric, withCorrelation } from '../observability.ts';
import type { EventDetail } from './detail.ts';
import { METRICS } from './metrics.ts';
import { consumerSettings } from './settings.ts';
import { queueUrlFromArn, sqs } from './sqs.ts';

/** The EventBridge event as an SQS target receives it (the message body). */
export interface BusEnvelope {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: EventDetail;
}

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
  const delay = Math.round(Math.min(300, consumerSettings().CONSUMER_RETRY_BASE_SECONDS * 2 ** (receives - 1)));
  try {
    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: queueUrlFromArn(record.eventSourceARN), ReceiptHandle: record.receiptHandle, VisibilityTimeout: delay }));
  } catch (err) {
    logger.warn(`${name}: could not schedule the retry`, { messageId: record.messageId, err });
  }
}

/**
 * Reads shared by the records of one batch: `memo(key, load)` runs `load` once
 * per key and hands every record the same answer. Under a burst one batch
 * holds many events of one account, which then need one read of, say, its
 * webhooks instead of one each. Scoped to the invocation, so nothing read
 * outlives the batch (a webhook created a moment ago is seen by the next one).
 * A failed load is not kept: the next record tries again.
 */
export type BatchMemo = <T>(key: string, load: () => Promise<T>) => Promise<T>;

export function batchMemo(): BatchMemo {
  const seen = new Map<string, Promise<unknown>>();
  return <T>(key: string, load: () => Promise<T>): Promise<T> => {
    let p = seen.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      seen.set(key, p);
      p.catch(() => seen.delete(key));
    }
    return p;
  };
}

/**
 * Process an SQS batch with Powertools' batch processor: every record handled
 * concurrently (the queues' batch sizes, at most 10, bound the fan-out), a
 * record whose `handle` throws is reported as a batch item failure
 * (reportBatchItemFailures) and only it comes back. A fresh processor per
 * invocation: the local pipeline runs several batches of one queue at once in
 * one process, and a processor keeps its batch's state. A batch that fails as
 * a whole is reported, not thrown: a throw would count as a Lambda error and
 * page for what is only a scheduled retry.
 */
export async function processSqsBatch(event: SQSEvent, handle: (record: SQSRecord) => Promise<void>): Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  return processPartialResponse(event, handle, processor, { processInParallel: true, throwOnFullBatchFailure: false });
}

/**
 * An SQS consumer of bus events: each record's EventBridge envelope is parsed
 * and handled on its own, under the event's correlation id; failures are
 * reported per record so only those are retried, with backoff, then
 * dead-lettered (parked) by the queue's redrive policy. One message that fails
 * every time never holds up the others.
 */
export function eventConsumer(name: string, handle: (detail: EventDetail, envelope: BusEnvelope, batch: BatchMemo) => Promise<void>) {
  async function consumeOne(record: SQSRecord, batch: BatchMemo): Promise<void> {
    let envelope: BusEnvelope;
    try {
      envelope = JSON.parse(record.body) as BusEnvelope;
    } catch (err) {
      // A body that is not JSON will never parse: retrying cannot help, so it goes to the DLQ via its receive count.
      logger.error(`${name}: unparseable message`, { messageId: record.messageId, err });
      throw err;
    }
    // The event's correlation id (from the API request that caused it) follows it into this consumer's logs.
    await withCorrelation(correlationIdFrom(envelope.detail?.correlationId), async () => {
      try {
        await handle(envelope.detail, envelope, batch);
      } catch (err) {
        logger.error(`${name}: handling failed`, { messageId: record.messageId, eventId: envelope.detail?.eventId, receives: record.attributes?.ApproximateReceiveCount, err });
        throw err;
      }
    });
  }
  return async function consume(event: SQSEvent): Promise<SQSBatchResponse> {
    let failures = 0;
    const batch = batchMemo();
    const response = await processSqsBatch(event, async (record) => {
      try {
        await consumeOne(record, batch);
      } catch (err) {
        failures++;
        await backOff(name, record);
        throw err;
      }
    });
    if (failures) recordMetric(METRICS.consumerFailures, failures);
    return response;
  };
}
