import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processSqsBatch } from '#shared/events/consumer.ts';
import { logger } from '#shared/logger.ts';
import { RecountMessageSchema, runRecountStep } from '#shared/views/background.ts';
import { recountSettings } from './settings.ts';

/** The next step of a count goes back on this same queue. */
const queueUrl = recountSettings().VIEW_RECOUNT_QUEUE_URL;

/** SQS consumer of background view counts: one page of tickets per message (resumable: settling twice changes nothing). */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return processSqsBatch(event, async (record) => {
    try {
      await runRecountStep(RecountMessageSchema.parse(JSON.parse(record.body)), queueUrl);
    } catch (err) {
      logger.error('view-recount: step failed', { messageId: record.messageId, err });
      throw err;
    }
  });
}
