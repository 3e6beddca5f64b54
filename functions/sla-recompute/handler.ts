import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processSqsBatch } from '#shared/events/consumer.ts';
import { logger } from '#shared/logger.ts';
import { recomputeBatch, type RecomputeMessage } from '#shared/sla/service.ts';
import { recomputeSettings } from './settings.ts';

/** The next page of a recompute goes back on this same queue. */
const queueUrl = recomputeSettings().SLA_RECOMPUTE_QUEUE_URL;

/**
 * SQS consumer of recompute batches (POST /sla-policies/recompute): a failed
 * message is reported on its own (batch item failure) and comes back after the
 * queue's visibility timeout, then goes to the DLQ after maxReceiveCount.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return processSqsBatch(event, async (record) => {
    try {
      await recomputeBatch(JSON.parse(record.body) as RecomputeMessage, queueUrl);
    } catch (err) {
      logger.error('sla-recompute: batch failed', { messageId: record.messageId, err });
      throw err;
    }
  });
}
