/**
 * The local stand-in for Lambda's SQS event-source mapping (local/queue-poller.ts) on an idle queue: `npm start`
 * polls every queue of the topology all the time, so whatever an idle poller keeps per wait must not pile up (its
 * workers' stale wakes did: the heap of an idle `npm start` grew 1.2 MB a minute).
 */
import { CreateQueueCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, expect, it } from 'vitest';
import { FairQueuePoller } from '../../local/queue-poller.ts';
import { sqsCalls } from '../../local/sqs-calls.ts';
import { startLocalSqs } from '../../local/sqs-emulator.ts';
import { eventually } from '../support/wait.ts';

const region = 'us-east-1';
const sqs = await startLocalSqs(0);
const calls = sqsCalls(sqs.endpoint, region);
const http = new SQSClient({ region, endpoint: sqs.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
afterAll(async () => {
  http.destroy();
  await sqs.stop();
});

it('keeps one wait per idle worker however long the queue stays idle, and hands the next message on at once', async () => {
  // Arrange: a poller of four workers on an empty queue, its long poll a second long (as the tests' pipelines run).
  const { QueueUrl } = await http.send(new CreateQueueCommand({ QueueName: 'idle-poller' }));
  const got: SQSRecord[] = [];
  const workers = 4;
  const poller = new FairQueuePoller(
    calls,
    { name: 'idle-poller', batchSize: 10, visibilityTimeoutSeconds: 30 },
    QueueUrl!,
    `arn:aws:sqs:${region}:000000000000:idle-poller`,
    region,
    async (event) => {
      got.push(...event.Records);
      return undefined;
    },
    workers,
    1,
  );
  poller.start();
  try {
    // Act: idle for three and a half seconds, so each worker's one-second safety net has ended its wait three times.
    await new Promise((r) => setTimeout(r, 3_500));
    const waiting = poller.waitingWorkers;
    await calls.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"accountId":"acct_idle"}' }));

    // Assert: one wait per worker (the stale ones made it 4 + 3 × 4), and the message handled as before.
    expect(waiting).toBe(workers);
    await eventually(() => got.length === 1, 10_000, 'the message handled');
    expect(JSON.parse(got[0].body)).toEqual({ accountId: 'acct_idle' });
  } finally {
    await poller.stop();
  }
});
