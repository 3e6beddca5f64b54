/**
 * The stack every bench script measures, started as `npm start` starts it:
 * the `local` stage's synthesized template and its bundles, DynamoDB Local
 * keeping its table on disk as `npm start` does (in a fresh directory removed
 * at the end; BENCH_STORE=memory: in memory), fauxqs with the template's queues, and each function in its own
 * worker with its template's environment (local/lambda/). One difference: the
 * functions reach DynamoDB Local through the counting proxy
 * (local/dynamodb-proxy.ts), because their calls happen in their workers where
 * this process cannot count them. The bench's own calls (seeding, bare-call
 * baselines) go straight to DynamoDB Local.
 */
import type { Message } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { startDynamoDbProxy, type DynamoDbProxy } from '../local/dynamodb-proxy.ts';
import { ensureTable, startDynamoDbLocal, type DynamoLocal } from '../local/dynamodb-local.ts';
import type { GatewayExtras } from '../local/gateway.ts';
import type { Bundles } from '../local/lambda/build.ts';
import { LOCAL_ACCOUNT, startLocalLambda, type LocalLambda } from '../local/lambda/index.ts';
import { createLocalBuckets } from '../local/lambda/buckets.ts';
import { createLocalQueues } from '../local/lambda/queues.ts';
import { startLocalSqs, type LocalSqs } from '../local/sqs-emulator.ts';
import { freePort } from '../local/ports.ts';
import { configureLocalEnv, LOCAL_REGION, LOCAL_TABLE, localConcurrency, localOverlay, localPriority, prepareDeployment, sqsClient } from '../local/stack.ts';

export const BENCH_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';

export interface BenchStack {
  dynamo: DynamoLocal;
  sqs: LocalSqs;
  /** The functions' DynamoDB endpoint: `store.reset()` is what they did since the last reset. */
  store: DynamoDbProxy;
  lambda: LocalLambda;
  bundles: Bundles;
  /** A gateway in front of the functions (the template's API), on a free port. */
  gateway(extras?: GatewayExtras): Promise<{ url: string; close(): Promise<void> }>;
  stop(): Promise<void>;
}

export async function startBenchStack(): Promise<BenchStack> {
  // Quiet functions (LOG_LEVEL is one of the knobs the local overlay forwards) and a quiet process.
  process.env.LOG_LEVEL = 'silent';
  const prepared = prepareDeployment();
  prepared.catch(() => undefined);
  const dataDir = process.env.BENCH_STORE === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'support-desk-bench-store-'));
  const dynamo = await startDynamoDbLocal(await freePort(), dataDir);
  await ensureTable(dynamo.endpoint, LOCAL_TABLE);
  const sqs = await startLocalSqs(0);
  configureLocalEnv({ dynamodbEndpoint: dynamo.endpoint, sessionSecret: BENCH_SECRET, sqsEndpoint: sqs.endpoint });
  const { deployment, bundles } = await prepared;
  await createLocalQueues(sqsClient(sqs.endpoint), deployment, LOCAL_REGION, LOCAL_ACCOUNT);
  // The template's bucket, as npm start makes it: attachments and the raw mail the SMTP server stores (bench/email.ts).
  await createLocalBuckets(sqs.endpoint, deployment, LOCAL_REGION);
  const store = await startDynamoDbProxy({ upstream: dynamo.endpoint });
  const lambda = await startLocalLambda({
    deployment,
    bundles,
    region: LOCAL_REGION,
    tableName: LOCAL_TABLE,
    dynamodbEndpoint: store.endpoint,
    sqsEndpoint: sqs.endpoint,
    sessionSecret: { current: BENCH_SECRET },
    overlay: localOverlay(undefined),
    niceOf: localPriority(deployment),
    concurrencyOf: localConcurrency(deployment),
  });
  const { startGateway } = await import('../local/gateway.ts');
  const gateways: Array<{ close(): Promise<void> }> = [];
  return {
    dynamo,
    sqs,
    store,
    lambda,
    bundles,
    async gateway(extras) {
      const gw = await startGateway(0, lambda, extras);
      gateways.push(gw);
      return gw;
    },
    async stop() {
      await Promise.all(gateways.map((g) => g.close().catch(() => undefined)));
      await lambda.stop();
      await store.stop();
      await sqs.stop();
      await dynamo.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Lambda's SQS event for messages of a queue (received ones, or bodies the bench builds), as an event-source mapping passes them. */
export const sqsEvent = (messages: Array<Pick<Message, 'MessageId' | 'ReceiptHandle' | 'Body'>>, queueArn: string): SQSEvent => ({
  Records: messages.map((m) => ({
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle ?? '',
    body: m.Body ?? '',
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: String(Date.now()), SenderId: LOCAL_ACCOUNT, ApproximateFirstReceiveTimestamp: String(Date.now()) },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: LOCAL_REGION,
  })),
});

/** A queue of the template by name: its URL and ARN, and the function its event-source mapping invokes with the mapping's batch size. */
export function templateQueue(lambda: LocalLambda, name: string) {
  const d = lambda.deployment;
  const q = [...d.queues.values()].find((x) => x.name === name);
  if (!q) throw new Error(`No queue ${name} in the template`);
  const m = d.sqsMappings.find((x) => x.queueId === q.logicalId);
  if (!m) throw new Error(`No consumer of ${name} in the template`);
  return { url: lambda.queueUrl(q.logicalId), arn: `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${name}`, fn: lambda.fn(m.functionId), batchSize: m.batchSize };
}
