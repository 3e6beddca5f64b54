import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { useReceiver, type Script } from '../fixtures/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { usePipeline } from '../support/pipeline.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { localLambda } from '../support/lambda.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/v1/webhooks';

const receiver = useReceiver();
let seq = 0;
const { account } = usePipeline(['webhook-fanout', 'webhook-delivery']);

async function webhook(acct: TestAccount, script?: Script) {
  const path = `/corr-${seq++}`;
  const res = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { name: path, targetUrl: receiver().url(path), events: ['ticket.created'] } } });
  expect(res.status).toBe(201);
  return { id: res.body.webhook.id as string, endpoint: receiver().endpoint(path, res.body.webhook.signingSecret, script) };
}

type Attempt = { deliveryId: string; attempt: number; state: string; correlationId: string | null };
const deliveries = async (acct: TestAccount, id: string): Promise<Attempt[]> => (await client.request('GET', `${BASE}/${id}/deliveries`, { token: acct.ownerKey })).body.deliveries;

/**
 * The log lines of the webhook delivery function while `fn` runs, parsed
 * (Powertools writes one JSON object per line): what CloudWatch Logs would
 * hold. The function logs at INFO meanwhile (tests otherwise run it silent).
 */
async function capturingLogs<T>(fn: (lines: Record<string, unknown>[]) => Promise<T>): Promise<T> {
  const delivery = (await localLambda()).byEntry('functions/webhook-delivery/handler.ts');
  await delivery.updateEnvironment({ LOG_LEVEL: 'INFO' });
  const lines: Record<string, unknown>[] = [];
  const stop = delivery.onLog((line) => {
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // not a structured line
    }
  });
  try {
    return await fn(lines);
  } finally {
    stop();
  }
}

/**
 * What code running in this process hands Powertools' logger while `fn` runs
 * (the eventConsumer tests below call the consumer here, not in a function's
 * worker). Taken at the logger's entry points: under tests it prints nothing.
 */
async function capturingProcessLogs<T>(fn: (lines: Record<string, unknown>[]) => Promise<T>): Promise<T> {
  const { baseLogger } = await import('#shared/observability.ts');
  const lines: Record<string, unknown>[] = [];
  const target = baseLogger as unknown as Record<string, unknown>;
  for (const level of ['info', 'warn', 'error'] as const) {
    target[level] = (message: string, data?: Record<string, unknown>) => lines.push({ level: level.toUpperCase(), message, ...data });
  }
  try {
    return await fn(lines);
  } finally {
    for (const level of ['info', 'warn', 'error']) delete target[level];
  }
}

const sqsRecord = (messageId: string, body: string): SQSRecord =>
  ({
    messageId,
    receiptHandle: `rh-${messageId}`,
    body,
    attributes: { ApproximateReceiveCount: '1' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:no-such-queue',
    awsRegion: 'us-east-1',
  }) as unknown as SQSRecord;
const envelope = (eventId: string, correlationId?: string) =>
  JSON.stringify({ id: eventId, source: 's', 'detail-type': 't', time: new Date().toISOString(), detail: { eventId, accountId: 'acc', ...(correlationId ? { correlationId } : {}) } });

describe('correlation ids in the webhook path', () => {
  it("an API call's x-request-id reaches every attempt of its delivery; a redelivery runs under the redeliver call's id", async () => {
    const acct = await account();
    const hook = await webhook(acct, (n) => ({ status: n === 1 ? 500 : 204 }));
    const requestId = `corr-${Date.now()}-${Math.random().toString(36).slice(2)}`;

    const created = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Followed end to end' } }, headers: { 'x-request-id': requestId } });
    expect(created.status).toBe(201);

    const log = await eventually(
      async () => {
        const l = await deliveries(acct, hook.id);
        return l.length === 2 && l[0].state === 'succeeded' ? l : null;
      },
      15_000,
      'a retry then a success',
    );
    expect(log!.map((a) => [a.attempt, a.state, a.correlationId])).toEqual([
      [2, 'succeeded', requestId],
      [1, 'retrying', requestId],
    ]);

    const redeliverId = `${requestId}-again`;
    const again = await client.request('POST', `${BASE}/${hook.id}/deliveries/${log![0].deliveryId}/redeliver`, { token: acct.ownerKey, headers: { 'x-request-id': redeliverId } });
    expect(again.status).toBe(202);
    const after = await eventually(
      async () => {
        const l = await deliveries(acct, hook.id);
        return l.length === 3 ? l : null;
      },
      15_000,
      'the redelivered attempt',
    );
    expect(after!.map((a) => [a.attempt, a.state, a.correlationId])).toEqual([
      [3, 'succeeded', redeliverId],
      [2, 'succeeded', requestId],
      [1, 'retrying', requestId],
    ]);
  });

  it('the delivery consumer logs under the id: a 410 that disables the webhook is logged with it', async () => {
    const acct = await account();
    const hook = await webhook(acct, () => ({ status: 410 }));
    const requestId = `gone-${Date.now()}-${Math.random().toString(36).slice(2)}`;

    await capturingLogs(async (lines) => {
      const created = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Receiver gone' } }, headers: { 'x-request-id': requestId } });
      expect(created.status).toBe(201);
      const line = await eventually(() => lines.find((l) => l.message === 'webhook disabled' && l.webhookId === hook.id), 15_000, 'the 410 log line');
      expect(line).toMatchObject({ level: 'WARN', correlationId: requestId, accountId: acct.accountId, disabledReason: 'gone' });
    });
    const log = await eventually(
      async () => {
        const l = await deliveries(acct, hook.id);
        return l.length === 1 ? l : null;
      },
      5_000,
      'the logged attempt',
    );
    expect(log![0]).toMatchObject({ state: 'failed', correlationId: requestId });
  });

  it("another account's delivery log stays out of reach", async () => {
    const [owner, other] = [await account(), await account()];
    const hook = await webhook(owner);
    expect((await client.request('GET', `${BASE}/${hook.id}/deliveries`, { token: other.ownerKey })).status).toBe(404);
  });
});

describe('eventConsumer on the batch processor', () => {
  it("handles records concurrently, each under its event's correlation id, and reports only the failed ones", async () => {
    const { ConsumedDetailSchema, eventConsumer } = await import('#shared/events/consumer.ts');
    const { currentCorrelationId } = await import('#shared/observability.ts');
    const seen = new Map<string, string | undefined>();
    let inFlight = 0;
    let most = 0;
    const consume = eventConsumer('test-consumer', ConsumedDetailSchema, async (detail) => {
      inFlight++;
      most = Math.max(most, inFlight);
      // Stay in flight for a turn of the event loop: records handled concurrently have all started by then.
      await nextTurn();
      inFlight--;
      seen.set(detail.eventId, currentCorrelationId());
      if (detail.eventId === 'evt_boom') throw new Error('boom');
    });
    const event: SQSEvent = {
      Records: [
        sqsRecord('m1', envelope('evt_a', 'req-a')),
        sqsRecord('m2', '{not json'),
        sqsRecord('m3', envelope('evt_boom', 'req-boom')),
        sqsRecord('m4', envelope('evt_b', 'req-b')),
        sqsRecord('m5', envelope('evt_none')),
      ],
    };

    const res = await capturingProcessLogs(async (lines) => {
      const out = await consume(event);
      // The failure is logged under the id of the event that failed, not of a neighbour in the batch.
      expect(lines.find((l) => l.message === 'test-consumer: handling failed')).toMatchObject({ correlationId: 'req-boom', eventId: 'evt_boom', messageId: 'm3' });
      expect(lines.find((l) => l.message === 'test-consumer: unparseable message')).toMatchObject({ messageId: 'm2' });
      return out;
    });

    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['m2', 'm3']);
    expect(seen.get('evt_a')).toBe('req-a');
    expect(seen.get('evt_b')).toBe('req-b');
    expect(seen.get('evt_boom')).toBe('req-boom');
    // An event without one still gets an id of its own, so its log lines can be grouped.
    expect(seen.get('evt_none')).toMatch(/^[0-9a-f-]{36}$/);
    expect(most).toBe(4);
  });

  it('reports a batch that fails as a whole instead of throwing', async () => {
    const { ConsumedDetailSchema, eventConsumer } = await import('#shared/events/consumer.ts');
    const consume = eventConsumer('test-consumer', ConsumedDetailSchema, async () => {
      throw new Error('down');
    });

    const res = await consume({ Records: [sqsRecord('x1', envelope('evt_x1')), sqsRecord('x2', 'nope')] });

    expect(res.batchItemFailures.map((f) => f.itemIdentifier).sort()).toEqual(['x1', 'x2']);
  });
});
