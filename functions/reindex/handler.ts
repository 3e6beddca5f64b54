import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processSqsBatch } from '#shared/events/consumer.ts';
import { logger } from '#shared/logger.ts';
import { enqueueReindex, reindexStep, type ReindexMessage } from '#shared/reindex/service.ts';
import { reindexSettings } from './settings.ts';

const queueUrl = reindexSettings().REINDEX_QUEUE_URL;

/**
 * SQS consumer of reindex steps (admin reindex): runs one step and queues the
 * next. A failed step is reported on its own and comes back after the
 * visibility timeout (the step is idempotent), then goes to the DLQ.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return processSqsBatch(event, async (record) => {
    const msg = JSON.parse(record.body) as ReindexMessage;
    const { records, next } = await reindexStep(msg);
    logger.info('reindex: step done', { accountId: msg.accountId, kind: msg.kind, records, done: !next });
    if (next) await enqueueReindex(queueUrl, next);
  });
}
