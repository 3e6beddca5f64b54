import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { backOff, processSqsBatch } from '#shared/events/consumer.ts';
import { enqueueJobStep, JobStepMessageSchema, runJobStep } from '#shared/jobs/service.ts';
import { logger } from '#shared/logger.ts';
import { JOB_EXECUTORS } from './executors.ts';
import { bulkJobsSettings } from './settings.ts';

const queueUrl = bulkJobsSettings().BULK_JOBS_QUEUE_URL;

/**
 * SQS consumer of job steps (bulk_update, bulk_delete, …: executors.ts): one
 * chunk of a job per message, then the next step queued. A failed step is
 * reported on its own and retried soon (backOff); it resumes its chunk without
 * doing an item twice, and goes to the DLQ after maxReceiveCount.
 */
export async function handler(event: SQSEvent): Promise<SQSBatchResponse> {
  return processSqsBatch(event, async (record) => {
    try {
      const msg = JobStepMessageSchema.parse(JSON.parse(record.body));
      const outcome = await runJobStep(msg, { executors: JOB_EXECUTORS, next: (m) => enqueueJobStep(queueUrl, m) });
      logger.info('bulk-jobs: step done', { ...msg, ...outcome });
    } catch (err) {
      // A body that does not parse fails every time: it reaches the DLQ after maxReceiveCount, as a failing step does.
      logger.error('bulk-jobs: step failed', { messageId: record.messageId, body: record.body.slice(0, 200), receives: record.attributes?.ApproximateReceiveCount, err });
      await backOff('bulk-jobs', record);
      throw err;
    }
  });
}
