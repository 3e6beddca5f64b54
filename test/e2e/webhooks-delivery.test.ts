import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { fileSqsEndpoint } from '../support/file-sqs.ts';
import { describe, expect, it } from 'vitest';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { TicketEventPayloadSchemas } from '#shared/tickets/event-payloads.ts';
import type { TicketEventType } from '#shared/tickets/events.ts';
import { usePipeline } from '../support/pipeline.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { useReceiver, type Script } from '../fixtures/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';

const { client } = useGateway();
const BASE = '/helpdesk/api/v1/webhooks';
const ALL: TicketEventType[] = ['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.assignment.changed', 'ticket.resolved'];

const receiver = useReceiver();
let seq = 0;
const { account, pipeline } = usePipeline(['webhook-fanout', 'webhook-delivery']);

/** A webhook on its own receiver path, answering by `script`. */
async function webhook(acct: TestAccount, events: TicketEventType[] = ALL, script?: Script, extra: Record<string, unknown> = {}) {
  const path = `/hook-${seq++}`;
  const res = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { name: path, targetUrl: receiver().url(path), events, ...extra } } });
  expect(res.status).toBe(201);
  const endpoint = receiver().endpoint(path, res.body.webhook.signingSecret, script);
  return { id: res.body.webhook.id as string, endpoint };
}

const createTicket = async (acct: TestAccount, subject = 'Printer on fire') => {
  const res = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject, requesterEmail: 'ann@customer.example', requesterName: 'Ann' } } });
  expect(res.status).toBe(201);
  return res.body.ticket;
};

const deliveries = async (acct: TestAccount, id: string) => (await client.request('GET', `${BASE}/${id}/deliveries`, { token: acct.ownerKey })).body.deliveries;

describe('webhook delivery pipeline', () => {
  it('delivers all five event types, signed per Standard Webhooks, with the documented payloads', async () => {
    // Arrange
    const acct = await account();
    const agent = await acct.addUser('member');
    const all = await webhook(acct);
    const onlyDeleted = await webhook(acct, ['ticket.deleted']);
    const inactive = await webhook(acct, ALL, undefined, { active: false });

    // Act: create, then one PUT that reassigns and resolves, then delete.
    const ticket = await createTicket(acct);
    const updated = await client.request('PUT', `/helpdesk/api/v1/tickets/${ticket.id}`, { token: acct.ownerKey, body: { ticket: { status: 'resolved', assigneeId: agent.id } } });
    expect(updated.status).toBe(200);
    expect((await client.request('DELETE', `/helpdesk/api/v1/tickets/${ticket.id}`, { token: acct.ownerKey })).status).toBe(204);

    // Assert
    await eventually(() => all.endpoint.received.length >= 5 && onlyDeleted.endpoint.received.length >= 1, 15_000, 'five deliveries');
    const byEvent = new Map(all.endpoint.received.map((r) => [(r.verified as { event: string }).event, r]));
    expect([...byEvent.keys()].sort()).toEqual([...ALL].sort());
    for (const r of all.endpoint.received) {
      expect(r.verified, 'signature verifies with standardwebhooks').not.toBeNull();
      expect(r.id).toMatch(/^evt_/);
      const payload = JSON.parse(r.body);
      expect(Object.keys(payload)).toEqual(['event', 'timestamp', 'data']);
      expect(TicketEventPayloadSchemas[payload.event as TicketEventType].safeParse(payload).success, payload.event).toBe(true);
    }
    expect(JSON.parse(byEvent.get('ticket.created')!.body).data.ticket).toMatchObject({ id: ticket.id, subject: 'Printer on fire', status: 'new' });
    expect(JSON.parse(byEvent.get('ticket.updated')!.body).data.ticket).toEqual({
      id: ticket.id,
      updatedFields: expect.objectContaining({ status: { from: 'new', to: 'resolved' }, assigneeId: { from: null, to: agent.id } }),
    });
    expect(JSON.parse(byEvent.get('ticket.assignment.changed')!.body).data.ticket).toEqual({ id: ticket.id, updatedFields: { assigneeId: { from: null, to: agent.id } } });
    expect(JSON.parse(byEvent.get('ticket.resolved')!.body).data.ticket).toMatchObject({ id: ticket.id, status: 'resolved', assigneeId: agent.id });
    expect(JSON.parse(byEvent.get('ticket.deleted')!.body).data).toEqual({ ticket: { id: ticket.id } });
    // Unsubscribed and inactive webhooks get nothing else.
    expect(onlyDeleted.endpoint.received.map((r) => (r.verified as { event: string }).event)).toEqual(['ticket.deleted']);
    expect(onlyDeleted.endpoint.received[0].id).toBe(byEvent.get('ticket.deleted')!.id);
    expect(inactive.endpoint.received).toEqual([]);
    // An attempt is logged once its POST has been answered, so the receiver can see a delivery before its log does.
    const log = await eventually(
      async () => {
        const logged = await deliveries(acct, all.id);
        return logged.length >= 5 && logged;
      },
      15_000,
      'five attempts logged',
    );
    expect(log).toHaveLength(5);
    expect(log.every((a: { state: string; statusCode: number; attempt: number }) => a.state === 'succeeded' && a.statusCode === 204 && a.attempt === 1)).toBe(true);
  });

  it('retries after two 500s with the same webhook-id, logs each attempt, and redelivers on request', async () => {
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created'], (n) => ({ status: n <= 2 ? 500 : 200 }));

    await createTicket(acct);

    await eventually(() => hook.endpoint.received.length >= 3, 15_000, 'third attempt');
    const ids = hook.endpoint.received.map((r) => r.id);
    expect(new Set(ids).size).toBe(1);
    expect(hook.endpoint.received.map((r) => r.status)).toEqual([500, 500, 200]);
    expect(hook.endpoint.received.every((r) => r.verified)).toBe(true);
    expect(new Set(hook.endpoint.received.map((r) => r.body)).size).toBe(1);
    const log = await eventually(
      async () => {
        const l = await deliveries(acct, hook.id);
        return l.length === 3 && l[0].state === 'succeeded' ? l : null;
      },
      5_000,
      'log of three attempts',
    );
    expect(log.map((a: { attempt: number; statusCode: number; state: string; eventId: string }) => [a.attempt, a.statusCode, a.state, a.eventId])).toEqual([
      [3, 200, 'succeeded', ids[0]],
      [2, 500, 'retrying', ids[0]],
      [1, 500, 'retrying', ids[0]],
    ]);
    expect(log[1].nextAttemptAt).toEqual(expect.any(String));
    expect(log[0]).toMatchObject({ eventType: 'ticket.created', error: null, durationMs: expect.any(Number), at: expect.any(String) });

    // Redeliver: the same body with the same webhook-id, attempt 4.
    const re = await client.request('POST', `${BASE}/${hook.id}/deliveries/${log[0].deliveryId}/redeliver`, { token: acct.ownerKey });
    expect(re.status).toBe(202);
    expect(re.body.delivery).toMatchObject({ deliveryId: log[0].deliveryId, eventId: ids[0], state: 'pending' });
    await eventually(() => hook.endpoint.received.length >= 4, 10_000, 'redelivery');
    expect(hook.endpoint.received[3]).toMatchObject({ id: ids[0], body: hook.endpoint.received[0].body });
    await eventually(async () => (await deliveries(acct, hook.id))[0]?.attempt === 4, 5_000, 'attempt 4 logged');
  });

  it('disables the webhook on 410 and stops delivering to it', async () => {
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created'], () => ({ status: 410 }));

    await createTicket(acct);

    await eventually(async () => (await client.request('GET', `${BASE}/${hook.id}`, { token: acct.ownerKey })).body.webhook.active === false, 15_000, 'webhook disabled');
    expect((await client.request('GET', `${BASE}/${hook.id}`, { token: acct.ownerKey })).body.webhook.disabledReason).toBe('gone');
    const log = await deliveries(acct, hook.id);
    expect(log).toEqual([expect.objectContaining({ attempt: 1, statusCode: 410, state: 'failed', error: expect.stringContaining('410') })]);
    await createTicket(acct, 'second');
    await pipeline().drained();
    expect(hook.endpoint.received).toHaveLength(1);
  });

  it('gives up after the 8th attempt: failed in the log and a copy in the dead-letter queue', async () => {
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created'], () => ({ status: 503 }));

    await createTicket(acct);

    await eventually(async () => (await deliveries(acct, hook.id))[0]?.state === 'failed', 25_000, 'delivery failed');
    expect(hook.endpoint.received).toHaveLength(8);
    const log = await deliveries(acct, hook.id);
    expect(log.map((a: { attempt: number }) => a.attempt)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    const { ReceiveMessageCommand, SQSClient } = await import('@aws-sdk/client-sqs');
    const sqs = new SQSClient({ endpoint: fileSqsEndpoint(), region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    const dead = await eventually(
      async () => {
        const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: process.env.WEBHOOK_DELIVERY_DLQ_URL, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }));
        return (out.Messages ?? []).map((m) => JSON.parse(m.Body!)).find((b) => b.webhookId === hook.id);
      },
      10_000,
      'DLQ message',
    );
    expect(dead).toMatchObject({ accountId: acct.accountId, deliveryId: log[0].deliveryId, eventType: 'ticket.created', attempts: 8, reason: expect.stringContaining('503') });
    sqs.destroy();
  });

  it('loses nothing when the publisher is down: the sweeper publishes the stored event unchanged, once', async () => {
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created']);
    await pipeline().stopPublisher();
    let ticket;
    try {
      // The ticket and its outbox item commit; nothing publishes them.
      ticket = await createTicket(acct, 'written during an outage');
      await pipeline().drained();
      expect(hook.endpoint.received).toHaveLength(0);
      const { ddb } = await import('#shared/db/client.ts');
      const { queryAll } = await import('#shared/db/query.ts');
      const outbox = await queryAll<Record<string, any>>({ keyCondition: 'pk = :pk AND begins_with(sk, :p)', names: {}, values: { ':pk': `A#${acct.accountId}`, ':p': 'OUTBOX#' }, forward: true });
      expect(outbox).toHaveLength(1);
      const stored = outbox[0];

      // The sweeper (as on start-up, or the schedule in AWS) publishes it.
      const swept = await pipeline().sweep(0);
      expect(swept.published).toBeGreaterThanOrEqual(1);

      const [r] = (await eventually(() => (hook.endpoint.received.length ? hook.endpoint.received : null), 10_000, 'delivery after sweep'))!;
      expect(r.id).toBe(stored.eventId);
      expect(JSON.parse(r.body)).toEqual({ event: 'ticket.created', timestamp: stored.detail.timestamp, data: stored.detail.data });
      expect(JSON.parse(r.body).data.ticket).toMatchObject({ id: ticket.id, subject: 'written during an outage' });
      expect((await ddb.send(new GetCommand({ TableName: LOCAL_TABLE, Key: { pk: stored.pk, sk: stored.sk } }))).Item).toBeUndefined();
    } finally {
      // The stream catches up on the same event: fan-out is idempotent, so no second delivery.
      await pipeline().startPublisher();
    }
    await pipeline().drained();
    expect(hook.endpoint.received).toHaveLength(1);
  });

  it('catches up from the stream when the publisher comes back', async () => {
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created']);
    await pipeline().stopPublisher();
    try {
      await createTicket(acct, 'queued in the stream');
      await pipeline().drained();
      expect(hook.endpoint.received).toHaveLength(0);
    } finally {
      await pipeline().startPublisher();
    }
    const [r] = (await eventually(() => (hook.endpoint.received.length ? hook.endpoint.received : null), 10_000, 'delivery after restart'))!;
    expect(JSON.parse(r.body).data.ticket.subject).toBe('queued in the stream');
  });

  it('honours a longer Retry-After, and refuses to redeliver while a delivery is still being retried (409)', async () => {
    const acct = await account();
    // 10^7 s is far beyond the schedule; scaled by the test factor it is 100 s, so the delivery stays in "retrying".
    const hook = await webhook(acct, ['ticket.created'], () => ({ status: 503, headers: { 'Retry-After': '10000000' } }));
    await createTicket(acct);
    const [first] = await eventually(
      async () => {
        const l = await deliveries(acct, hook.id);
        return l.length ? l : null;
      },
      10_000,
      'first attempt',
    );
    expect(first).toMatchObject({ state: 'retrying', statusCode: 503, attempt: 1 });
    expect(Date.parse(first.nextAttemptAt) - Date.parse(first.at)).toBe(100_000);
    const re = await client.request('POST', `${BASE}/${hook.id}/deliveries/${first.deliveryId}/redeliver`, { token: acct.ownerKey });
    expect(re.status).toBe(409);
    expect(re.body.error.code).toBe('CONFLICT');
    // The retry waits its 100 s in the queue: nothing else goes out meanwhile.
    await pipeline().drained();
    expect(hook.endpoint.received).toHaveLength(1);
  });

  it('a redelivered event creates no second delivery and sends nothing again once attempted', async () => {
    // Arrange: one event delivered through the pipeline.
    const acct = await account();
    const hook = await webhook(acct, ['ticket.created']);
    await createTicket(acct, 'delivered once');
    await eventually(() => hook.endpoint.received.length === 1, 15_000, 'first delivery');
    const first = hook.endpoint.received[0];
    const payload = JSON.parse(first.body);

    // Act: the fan-out sees the same event again (EventBridge and SQS deliver at least once).
    const { fanOut } = await import('#shared/webhooks/delivery.ts');
    const { fanoutSettings } = await import('#functions/webhook-fanout/settings.ts');
    const subscribed = await fanOut({ eventId: first.id, accountId: acct.accountId, ...payload }, fanoutSettings().WEBHOOK_DELIVERY_QUEUE_URL);

    // Assert: the webhook is still subscribed, but its one delivery keeps its single attempt and nothing is re-sent.
    expect(subscribed).toBe(1);
    await pipeline().drained();
    expect(hook.endpoint.received).toHaveLength(1);
    const log = await deliveries(acct, hook.id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ eventId: first.id, attempt: 1, state: 'succeeded' });
  });
});
