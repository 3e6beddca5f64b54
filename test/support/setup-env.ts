import { readFileSync } from 'node:fs';
import { afterAll, inject } from 'vitest';
import { createLocalBuckets } from '../../local/lambda/buckets.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import { LOCAL_ACCOUNT } from '../../local/lambda/index.ts';
import { createLocalQueues } from '../../local/lambda/queues.ts';
import { startLocalSqs } from '../../local/sqs-emulator.ts';
import { configureLocalEnv, LOCAL_REGION, sqsClient } from '../../local/stack.ts';
import { setFileSqsEndpoint } from './file-sqs.ts';

// Runs in each test worker before the test file imports any handler module.
// This file's own queues and buckets (see file-sqs.ts), created from the run's template.
const sqs = await startLocalSqs(0);
const { stackName, templateFile } = inject('deployment');
const deployment = readDeployment(stackName, JSON.parse(readFileSync(templateFile, 'utf8')));
await createLocalQueues(sqsClient(sqs.endpoint), deployment, LOCAL_REGION, LOCAL_ACCOUNT);
await createLocalBuckets(sqs.endpoint, deployment, LOCAL_REGION);
setFileSqsEndpoint(sqs.endpoint);
afterAll(async () => sqs.stop());

configureLocalEnv({ dynamodbEndpoint: inject('dynamodbEndpoint'), sessionSecret: inject('sessionSecret'), sqsEndpoint: sqs.endpoint });
// Webhook retries run on the real schedule scaled down (27.6 h -> about 1 s), so the whole schedule runs in a test.
process.env.WEBHOOK_RETRY_SCALE ??= '0.00001';
