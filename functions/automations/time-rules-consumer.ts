import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { evaluateBatch, TimeRuleBatchSchema } from '#shared/automations/time-rules.ts';
import { processSqsBatch } from '#shared/events/consumer.ts';
import { logger } from '#shared/logger.ts';

/**
 * SQS consumer of the hourly time-rule batches: a failed message is reported
 * on its own (batch item failure) and retried whole after the queue's
 * visibility timeout (re-applying changes nothing), then goes to the DLQ after
 * maxReceiveCount.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return processSqsBatch(event, async (record) => {
    try {
      await evaluateBatch(TimeRuleBatchSchema.parse(JSON.parse(record.body)));
    } catch (err) {
      logger.error('automation time rules: batch failed', { messageId: record.messageId, err });
      throw err;
    }
  });
}
