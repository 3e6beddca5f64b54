import { readFileSync } from 'node:fs';
import { afterAll, inject } from 'vitest';
import { createLocalBuckets } from '../../local/lambda/buckets.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import { LOCAL_ACCOUNT } from '../../local/lambda/index.ts';
import { createLocalQueues } from '../../local/lambda/queues.ts';
import { startLocalSqs, type LocalSqs } from '../../local/sqs-emulator.ts';
import { configureLocalEnv, LOCAL_REGION, sqsClient } from '../../local/stack.ts';
import { forgetReadSettings } from '#shared/config/settings.ts';
import { awaitDeployment } from './deployment.ts';
import { setFileSqsEndpoint } from './file-sqs.ts';
import { beginFile, endFile } from './lambda.ts';

// Runs in each test worker before each test file imports any handler module. The integration project does not
// isolate files (vitest.config.ts): a worker runs its files one after another in one process, so what this file
// starts is kept for the worker's next file, and what a file changes is put back after it.

// The run's deployment and DynamoDB Local, prepared by the global setup while the unit and infra files ran.
const { stackName, templateFile } = await awaitDeployment();

// This worker's SQS/S3 emulator (see file-sqs.ts), created from the run's template once, and emptied after each
// file: the next file starts on empty queues and buckets, as on an emulator of its own.
const worker = globalThis as { fileSqs?: Promise<LocalSqs> };
worker.fileSqs ??= (async () => {
  const sqs = await startLocalSqs(0);
  const deployment = readDeployment(stackName, JSON.parse(readFileSync(templateFile, 'utf8')));
  await createLocalQueues(sqsClient(sqs.endpoint), deployment, LOCAL_REGION, LOCAL_ACCOUNT);
  await createLocalBuckets(sqs.endpoint, deployment, LOCAL_REGION);
  return sqs;
})();
const sqs = await worker.fileSqs;
setFileSqsEndpoint(sqs.endpoint);

// A file's changes to the environment (EMAIL_OUTBOX_DIR, FAULTS, timeouts) are its own: the worker's environment as
// it started is put back after each file, and before each (a file that failed to load ran no after-hook).
const pristine = ((globalThis as { pristineEnv?: NodeJS.ProcessEnv }).pristineEnv ??= { ...process.env });
const putBack = () => {
  for (const k of Object.keys(process.env)) if (!(k in pristine)) delete process.env[k];
  Object.assign(process.env, pristine);
};
await endFile();
putBack();
configureLocalEnv({ dynamodbEndpoint: inject('dynamodbEndpoint'), sessionSecret: inject('sessionSecret'), sqsEndpoint: sqs.endpoint });
// Webhook retries run on the real schedule scaled down (27.6 h -> about 1 s), so the whole schedule runs in a test.
process.env.WEBHOOK_RETRY_SCALE ??= '0.00001';
// The shared modules this process has loaded read their settings from this file's environment, not the last file's.
forgetReadSettings();
beginFile();

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks last-registered first):
// the file's gateway, pipeline and functions have stopped when its queues are emptied.
afterAll(async () => {
  await endFile();
  sqs.reset();
  putBack();
});
