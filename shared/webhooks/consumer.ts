import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { backOff, batchMemo, processSqsBatch, type BatchMemo } from '../events/consumer.ts';
import { changeMessageVisibility } from '../events/sqs.ts';
import { logger } from '../logger.ts';
import { correlationIdFrom, withCorrelation } from '../observability.ts';
import { attemptDelivery, type DeliveryConfig, type DeliveryMessage } from './delivery.ts';

/** Not a failure: the delivery keeps its message, which SQS hands back when the next attempt is due. */
class RetryScheduled extends Error {
  constructor(readonly deliveryId: string) {
    super(`delivery ${deliveryId}: next attempt scheduled`);
    this.name = 'RetryScheduled';
  }
}

/**
 * The delivery queue's consumer. Each message is one delivery, attempted
 * concurrently with the rest of the batch (one slow target never holds up
 * another), under the correlation id of the request that caused its event. A
 * retry keeps the message: its visibility is set to the retry delay and it is
 * reported as a batch item failure, so SQS hands it back when the next attempt
 * is due. Success, 410 and dead-lettering delete it.
 */
export function deliveryConsumer(config: DeliveryConfig) {
  async function consumeOne(record: SQSRecord, batch: BatchMemo): Promise<void> {
    let msg: DeliveryMessage;
    try {
      msg = JSON.parse(record.body) as DeliveryMessage;
    } catch (err) {
      logger.error('webhook-delivery: unparseable message', { messageId: record.messageId, err });
      await backOff('webhook-delivery', record);
      throw err;
    }
    const correlationId = correlationIdFrom(msg.correlationId);
    await withCorrelation(correlationId, async () => {
      let outcome: Awaited<ReturnType<typeof attemptDelivery>>;
      try {
        outcome = await attemptDelivery({ ...msg, correlationId }, config, new Date(), batch);
      } catch (err) {
        logger.error('webhook-delivery: attempt failed', { messageId: record.messageId, deliveryId: msg.deliveryId, err });
        // A crash (not a failed POST, which follows the retry schedule): back soon, and to the DLQ if it keeps crashing.
        await backOff('webhook-delivery', record);
        throw err;
      }
      if (outcome.action !== 'retry') return;
      try {
        await changeMessageVisibility({ QueueUrl: config.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: outcome.delaySeconds });
      } catch (err) {
        // The message still comes back, after the queue's visibility timeout instead of the scheduled delay.
        logger.warn('webhook-delivery: could not schedule the retry', { messageId: record.messageId, err });
      }
      throw new RetryScheduled(msg.deliveryId);
    });
  }
  return (event: SQSEvent): Promise<SQSBatchResponse> => {
    const batch = batchMemo();
    return processSqsBatch(event, (record) => consumeOne(record, batch));
  };
}
