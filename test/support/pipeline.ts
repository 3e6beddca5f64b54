import { afterAll, beforeAll, inject } from 'vitest';
import { fileSqsEndpoint } from './file-sqs.ts';
import type { Pipeline, PipelineOptions } from '../../local/pipeline.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';
import type { QueueName } from '#app/topology.ts';
import { createTestAccount } from './api.ts';
import { localLambda } from './lambda.ts';

/**
 * The local pipeline for one test file: the run's DynamoDB Local and fauxqs,
 * the given queues' consumers, 50 ms stream polling, no timers (tests run
 * scheduled jobs with `runSchedule`), and only the events of the file's own
 * accounts (add them to `mine`): files share the table and assert on their own
 * events. Started before the file's tests, stopped after.
 */
export function usePipeline(queues: readonly QueueName[], extra: Partial<PipelineOptions> = {}) {
  const mine = new Set<string>();
  let pipeline: Pipeline | undefined;
  const lambda = localLambda();
  beforeAll(async () => {
    const { startPipeline } = await import('../../local/pipeline.ts');
    pipeline = await startPipeline({
      lambda: await lambda,
      dynamodbEndpoint: inject('dynamodbEndpoint'),
      sqsEndpoint: fileSqsEndpoint(),
      tableName: LOCAL_TABLE,
      queues,
      pollIntervalMs: 50,
      schedules: false,
      accounts: mine,
      ...extra,
    });
  });
  afterAll(async () => pipeline?.stop());
  /** A new test account whose events this pipeline handles. */
  const account = async () => {
    const a = await createTestAccount();
    mine.add(a.accountId);
    return a;
  };
  return { mine, account, pipeline: () => pipeline! };
}
