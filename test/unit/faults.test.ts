import { GetItemCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { FAULT_SINK, injectedFaults, injectFaults } from '#shared/faults/inject.ts';
import { describeFaults, parseFaults } from '#shared/faults/settings.ts';
import { toHttpError } from '#shared/http/error-map.ts';

// One setting for the file (settings are read once, as at a cold start): every call of each service fails its own way.
// The clients count as a function's (AWS_LAMBDA_FUNCTION_NAME): outside one, no fault is injected.
process.env.FAULTS = 'dynamodb:throttle:1,sqs:timeout:1,s3:error:1,events:partial:1';
process.env.AWS_LAMBDA_FUNCTION_NAME = 'faults-unit-test';

const local = { region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };

describe('FAULTS setting', () => {
  it('reads service:kind:rate entries', () => {
    expect(parseFaults('dynamodb:throttle:0.05, dynamodb:timeout:0.01,events:partial:0.05,sqs:error:0.02,s3:error:.5')).toEqual([
      { service: 'dynamodb', kind: 'throttle', rate: 0.05 },
      { service: 'dynamodb', kind: 'timeout', rate: 0.01 },
      { service: 'events', kind: 'partial', rate: 0.05 },
      { service: 'sqs', kind: 'error', rate: 0.02 },
      { service: 's3', kind: 'error', rate: 0.5 },
    ]);
    expect(parseFaults(undefined)).toEqual([]);
    expect(parseFaults('')).toEqual([]);
    expect(describeFaults([])).toBe('none');
    expect(describeFaults(parseFaults('sqs:error:0.02'))).toBe('sqs:error:0.02');
  });

  it.each([
    ['kinesis:error:0.1', 'Invalid FAULTS entry "kinesis:error:0.1": unknown service "kinesis" (one of dynamodb, events, sqs, s3)'],
    ['dynamodb:slow:0.1', 'unknown kind "slow"'],
    ['dynamodb:throttle', 'not three parts'],
    ['dynamodb:throttle:2', 'rate "2" is not a number from 0 to 1'],
    ['dynamodb:throttle:-0.1', 'rate "-0.1" is not a number from 0 to 1'],
    ['dynamodb:throttle:abc', 'rate "abc"'],
    ['sqs:partial:0.1', 'partial applies to events only'],
    ['s3:error:0.1,s3:error:0.2', 's3:error is given twice'],
    ['dynamodb:throttle:0.6,dynamodb:error:0.6', 'the rates of dynamodb add up to 1.2'],
  ])('refuses %s, naming what is wrong', (spec, message) => {
    expect(() => parseFaults(spec)).toThrow(message);
  });
});

describe('injected faults on an SDK client', () => {
  it('throttles DynamoDB with its own error, which the SDK retries as throttling and the API answers as a 503 with Retry-After', async () => {
    // Arrange
    const client = new DynamoDBClient({ ...local, maxAttempts: 3 });
    injectFaults(client, 'dynamodb', { requestTimeoutMs: 1_000 });
    const seen: string[] = [];
    (globalThis as Record<symbol, unknown>)[FAULT_SINK] = (service: string, kind: string) => seen.push(`${service}:${kind}`);
    injectedFaults(true);

    // Act
    const err = (await client.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } })).catch((e) => e)) as any;

    // Assert: every attempt was throttled (the SDK retried twice), and none reached the endpoint (nothing listens there).
    expect(['ProvisionedThroughputExceededException', 'ThrottlingException']).toContain(err.name);
    expect(err.$retryable).toEqual({ throttling: true });
    expect(err.$metadata.attempts).toBe(3);
    expect(seen).toEqual(['dynamodb:throttle', 'dynamodb:throttle', 'dynamodb:throttle']);
    expect(injectedFaults()).toEqual({ 'dynamodb:throttle': 3 });
    const mapped = toHttpError(err, 'helpdesk');
    expect(mapped).toMatchObject({ status: 503, headers: { 'Retry-After': '1' }, body: { success: false, error: { code: 'SERVICE_UNAVAILABLE' } } });
    expect(toHttpError(err, 'playbook')).toMatchObject({ status: 503, body: { error: { code: 'service_unavailable' } } });
    delete (globalThis as Record<symbol, unknown>)[FAULT_SINK];
  });

  it('hangs an SQS call until the configured request timeout, then fails it as the SDK handler does (TimeoutError, retried)', async () => {
    const client = new SQSClient({ ...local, maxAttempts: 2 });
    injectFaults(client, 'sqs', { requestTimeoutMs: 60 });
    const began = Date.now();

    const err = (await client.send(new SendMessageCommand({ QueueUrl: 'http://127.0.0.1:9/000000000000/q', MessageBody: '{}' })).catch((e) => e)) as any;

    expect(err.name).toBe('TimeoutError');
    expect(err.$metadata.attempts).toBe(2);
    expect(Date.now() - began).toBeGreaterThanOrEqual(120);
    expect(toHttpError(err, 'helpdesk').status).toBe(503);
  });

  it("answers S3 calls with S3's 500/503, and a call's abort signal still ends a hung one", async () => {
    const client = new S3Client({ ...local, forcePathStyle: true, maxAttempts: 1 });
    injectFaults(client, 's3', { requestTimeoutMs: 1_000 });

    const err = (await client.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' })).catch((e) => e)) as any;

    expect(['InternalError', 'ServiceUnavailable']).toContain(err.name);
    expect(err.$fault).toBe('server');
    expect([500, 503]).toContain(err.$metadata.httpStatusCode);
    expect(toHttpError(err, 'helpdesk').status).toBe(503);

    // A hung call with an abort signal (an API request's S3 budget) ends at the signal, as the SDK's handler does.
    const hung = new S3Client({ ...local, forcePathStyle: true, maxAttempts: 3 });
    injectFaults(hung, 's3', { requestTimeoutMs: 10_000, settings: { FAULTS: parseFaults('s3:timeout:1'), AWS_LAMBDA_FUNCTION_NAME: 'faults-unit-test' } });
    const began = Date.now();
    const aborted = (await hung.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k' }), { abortSignal: AbortSignal.timeout(100) }).catch((e) => e)) as any;
    expect(aborted.name).toBe('AbortError');
    expect(Date.now() - began).toBeLessThan(2_000);
    expect(toHttpError(aborted, 'helpdesk').status).toBe(503);
  });

  it('answers PutEvents with some entries failed (FailedEntryCount > 0) and sends only the others on', async () => {
    // Arrange: a bus that accepts whatever reaches it, in place of the network.
    const client = new EventBridgeClient(local);
    injectFaults(client, 'events', { requestTimeoutMs: 1_000 });
    const reached: string[] = [];
    client.middlewareStack.add(
      () => async (args: any) => {
        reached.push(...args.input.Entries.map((e: { Detail: string }) => e.Detail));
        return { output: { $metadata: {}, FailedEntryCount: 0, Entries: args.input.Entries.map((_: unknown, i: number) => ({ EventId: `ev-${i}` })) }, response: {} };
      },
      { step: 'build', name: 'fakeBus' },
    );
    const entries = Array.from({ length: 6 }, (_, i) => ({ Source: 's', DetailType: 't', Detail: `{"n":${i}}`, EventBusName: 'b' }));

    // Act
    const out = await client.send(new PutEventsCommand({ Entries: entries }));

    // Assert: in entry order, the failed ones carry an error code and were never sent; the rest went through.
    expect(out.FailedEntryCount).toBeGreaterThan(0);
    expect(out.Entries).toHaveLength(6);
    const failed = out.Entries!.flatMap((e, i) => (e.ErrorCode ? [i] : []));
    expect(failed).toHaveLength(out.FailedEntryCount!);
    for (const e of out.Entries!.filter((x) => x.ErrorCode)) expect(['InternalFailure', 'ThrottlingException']).toContain(e.ErrorCode);
    expect(reached).toEqual(entries.filter((_, i) => !failed.includes(i)).map((e) => e.Detail));
  });

  it('adds nothing outside a function: the local stack, the admin CLI and test fixtures share these clients and stay honest', () => {
    const client = new DynamoDBClient(local);
    const before = client.middlewareStack.identify();

    injectFaults(client, 'dynamodb', { requestTimeoutMs: 1_000, settings: { FAULTS: parseFaults('dynamodb:throttle:1'), AWS_LAMBDA_FUNCTION_NAME: undefined } });

    expect(client.middlewareStack.identify()).toEqual(before);
  });
});
