import { SQSClient } from '@aws-sdk/client-sqs';
import { env } from '../config/env.ts';
import { pipelineEnv } from './env.ts';

const { SQS_ENDPOINT } = pipelineEnv();

/** The one SQS client of a process (fauxqs locally), created at module load. */
export const sqs = new SQSClient({
  region: env().AWS_REGION,
  ...(SQS_ENDPOINT ? { endpoint: SQS_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
});
