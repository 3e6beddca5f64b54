/**
 * The stack's own SQS calls (the bus, the pollers) run in process on fauxqs's
 * handlers (local/sqs-calls.ts). They must answer as the HTTP API does: the
 * same messages, and the same refusals SQS makes.
 */
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFauxqs } from 'fauxqs';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalSqs } from '../../local/sqs-emulator.ts';
import { commitWithoutFsync, sqsCalls } from '../../local/sqs-calls.ts';

const sqs = await startLocalSqs(0);
const http = new SQSClient({ region: 'us-east-1', endpoint: sqs.endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
const { QueueUrl } = await http.send(new (await import('@aws-sdk/client-sqs')).CreateQueueCommand({ QueueName: 'in-process-calls' }));
afterAll(async () => {
  http.destroy();
  await sqs.stop();
});

describe('in-process SQS calls', () => {
  const calls = sqsCalls(sqs.endpoint, 'us-east-1');

  it('are in process for an emulator of this process, and an SDK client for another endpoint', () => {
    expect(calls).toBe(sqsCalls(sqs.endpoint, 'us-east-1'));
    expect(sqsCalls('http://127.0.0.1:1', 'us-east-1')).not.toBe(calls);
  });

  it('send, receive and delete the messages the HTTP API sees', async () => {
    const sent = await calls.send(new SendMessageCommand({ QueueUrl, MessageBody: '{"a":1}' }));
    const got = await http.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 0 }));
    expect(got.Messages?.map((m) => [m.MessageId, m.Body])).toEqual([[sent.MessageId, '{"a":1}']]);
    const received = await calls.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['All'] }));
    expect(received.Messages).toHaveLength(1);
    expect(received.Messages![0].Attributes?.ApproximateReceiveCount).toBe('2');
    await calls.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: [{ Id: '0', ReceiptHandle: received.Messages![0].ReceiptHandle! }] }));
    await calls.send(new ChangeMessageVisibilityBatchCommand({ QueueUrl, Entries: [{ Id: '0', ReceiptHandle: received.Messages![0].ReceiptHandle!, VisibilityTimeout: 1 }] }));
    const after = await http.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    expect(after.Messages).toBeUndefined();
  });

  it('refuse what SQS refuses, named by its error code', async () => {
    await expect(calls.send(new SendMessageCommand({ QueueUrl, MessageBody: 'bad \uFFFF char' }))).rejects.toMatchObject({ name: 'InvalidMessageContents' });
    await expect(calls.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x'.repeat(1_048_577) }))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    await expect(calls.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 11 }))).rejects.toMatchObject({ name: 'InvalidParameterValue' });
    const eleven = Array.from({ length: 11 }, (_, i) => ({ Id: String(i), ReceiptHandle: 'x' }));
    await expect(calls.send(new DeleteMessageBatchCommand({ QueueUrl, Entries: eleven }))).rejects.toMatchObject({ name: 'TooManyEntriesInBatchRequest' });
    await expect(calls.send(new SendMessageCommand({ QueueUrl: `${sqs.endpoint}/000000000000/missing`, MessageBody: 'x' }))).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
  });

  it('wake a waiting long poll at once', async () => {
    const started = Date.now();
    // In process the receive is waiting on the empty queue as soon as send has been called.
    const waiting = calls.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    calls.wakeReceives();
    expect((await waiting).Messages).toBeUndefined();
    // A count, not a timing: the poll returned long before its 20 s wait (the test's own timeout is far below it).
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

describe('persisted queues', () => {
  it("commit without an fsync each (fauxqs's store reached), and keep what they hold across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-persisted-'));
    try {
      const first = await startFauxqs({ port: 0, logger: false, dataDir: dir });
      // false would mean a fauxqs whose store this code no longer reaches: every change would sync the disk again.
      expect(await commitWithoutFsync(first)).toBe(true);
      const client = new SQSClient({ region: 'us-east-1', endpoint: first.address, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      const { QueueUrl: url } = await client.send(new (await import('@aws-sdk/client-sqs')).CreateQueueCommand({ QueueName: 'persisted' }));
      const sent = await client.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'kept' }));
      client.destroy();
      await first.stop();

      const second = await startFauxqs({ port: first.port, logger: false, dataDir: dir });
      const again = new SQSClient({ region: 'us-east-1', endpoint: second.address, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
      const got = await again.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
      expect(got.Messages?.map((m) => [m.MessageId, m.Body])).toEqual([[sent.MessageId, 'kept']]);
      again.destroy();
      await second.stop();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
