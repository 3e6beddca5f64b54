import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger } from '#shared/logger.ts';
import { recomputeBatch, type RecomputeMessage } from '#shared/sla/service.ts';
import { recomputeSettings } from './settings.ts';

/** The next page of a recompute goes back on this same queue. */
const queueUrl = recomputeSettings().SLA_RECOMPUTE_QUEUE_URL;

/** SQS consumer of recompute batches (POST /sla-policies/recompute); a failed batch is retried on its own. */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  const batchItemFailures: SQSBatchResponse['batchItemFailures'] = [];
  for (const record of event.Records) {
    try {
      await recomputeBatch(JSON.parse(record.body) as RecomputeMessage, queueUrl);
    } catch (err) {
      logger.error('sla-recompute: batch failed', { messageId: record.messageId, err });
      batchItemFailures.push({ itemIdentifier: record.messageId });
    }
  }
  return { batchItemFailures };
}
