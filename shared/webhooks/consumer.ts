import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { backOff } from '../events/consumer.ts';
import { sqs } from '../events/sqs.ts';
import { logger } from '../logger.ts';
import { attemptDelivery, type DeliveryConfig, type DeliveryMessage } from './delivery.ts';

/**
 * The delivery queue's consumer. Each message is one delivery, attempted
 * concurrently with the rest of the batch (one slow target never holds up
 * another). A retry keeps the message: its visibility is set to the retry
 * delay and it is reported as a batch item failure, so SQS hands it back
 * when the next attempt is due. Success, 410 and dead-lettering delete it.
 */
export function deliveryConsumer(config: DeliveryConfig) {
  return async function consumeDeliveries(event: SQSEvent): Promise<SQSBatchResponse> {
    const failures = await Promise.all(
      event.Records.map(async (record): Promise<string | null> => {
        let msg: DeliveryMessage;
        try {
          msg = JSON.parse(record.body) as DeliveryMessage;
        } catch (err) {
          logger.error('webhook-delivery: unparseable message', { messageId: record.messageId, err });
          await backOff('webhook-delivery', record);
          return record.messageId;
        }
        try {
          const outcome = await attemptDelivery(msg, config);
          if (outcome.action !== 'retry') return null;
          try {
            await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: config.queueUrl, ReceiptHandle: record.receiptHandle, VisibilityTimeout: outcome.delaySeconds }));
          } catch (err) {
            // The message still comes back, after the queue's visibility timeout instead of the scheduled delay.
            logger.warn('webhook-delivery: could not schedule the retry', { messageId: record.messageId, err });
          }
          return record.messageId;
        } catch (err) {
          logger.error('webhook-delivery: attempt failed', { messageId: record.messageId, deliveryId: msg.deliveryId, err });
          // A crash (not a failed POST, which follows the retry schedule): back soon, and to the DLQ if it keeps crashing.
          await backOff('webhook-delivery', record);
          return record.messageId;
        }
      }),
    );
    return { batchItemFailures: failures.filter((id): id is string => id !== null).map((itemIdentifier) => ({ itemIdentifier })) };
  };
}
