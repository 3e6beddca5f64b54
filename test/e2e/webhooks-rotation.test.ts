import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ROTATION_OVERLAP_MS } from '#shared/webhooks/signing.ts';
import { useReceiver, type Received, type Script } from '../fixtures/webhook-receiver.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { usePipeline } from '../support/pipeline.ts';
import { backdateWebhookRotation } from '../support/store.ts';
import { eventually } from '../support/wait.ts';

// Signing secret rotation and test deliveries (decisions §18), through the API and the pipeline.
const { client } = useGateway();
const receiver = useReceiver();
const { account, pipeline } = usePipeline(['webhook-fanout', 'webhook-delivery']);
const BASE = '/helpdesk/api/v1/webhooks';
let seq = 0;

async function webhook(acct: TestAccount, script?: Script, extra: Record<string, unknown> = {}) {
  const path = `/rotation-${seq++}`;
  const res = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { name: path, targetUrl: receiver().url(path), events: ['ticket.created'], ...extra } } });
  expect(res.status, res.text).toBe(201);
  const secret: string = res.body.webhook.signingSecret;
  return { id: res.body.webhook.id as string, secret, endpoint: receiver().endpoint(path, secret, script) };
}

const createTicket = async (acct: TestAccount, subject: string) => {
  const res = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject, requesterEmail: 'ann@customer.example' } } });
  expect(res.status, res.text).toBe(201);
};

/** The reference library's verdict on a received request with one secret: the payload, or null when no signature verifies. */
const verifiedWith = (secret: string, r: Received): unknown => {
  try {
    return new Webhook(secret).verify(r.body, { 'webhook-id': r.id, 'webhook-timestamp': r.timestamp, 'webhook-signature': r.signature });
  } catch {
    return null;
  }
};

const deliveries = async (acct: TestAccount, id: string) => (await client.request('GET', `${BASE}/${id}/deliveries`, { token: acct.ownerKey })).body.deliveries;

describe('signing secret rotation', () => {
  it('signs with the new and the old secret for 24 hours (both verify with standardwebhooks), then with the new one only', async () => {
    // Arrange
    const acct = await account();
    const hook = await webhook(acct);

    // Act: rotate, then one event inside the overlap.
    const rotated = await client.request('POST', `${BASE}/${hook.id}/rotate_secret`, { token: acct.ownerKey });
    await createTicket(acct, 'inside the overlap');
    const [inside] = (await eventually(() => (hook.endpoint.received.length === 1 ? hook.endpoint.received : null), 15_000, 'delivery inside the overlap'))!;

    // Assert: a new secret, shown once, and both secrets verify the delivery.
    expect(rotated.status, rotated.text).toBe(200);
    const fresh: string = rotated.body.webhook.signingSecret;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(fresh).not.toBe(hook.secret);
    expect(rotated.body.webhook).toMatchObject({ id: hook.id, active: true, disabledReason: null, signingSecretRotatedAt: expect.any(String) });
    const got = await client.request('GET', `${BASE}/${hook.id}`, { token: acct.ownerKey });
    expect(got.body.webhook.signingSecret).toBeUndefined();
    expect(got.body.webhook.signingSecretRotatedAt).toBe(rotated.body.webhook.signingSecretRotatedAt);
    expect(inside.signature.split(' ')).toHaveLength(2);
    expect(inside.signature).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifiedWith(fresh, inside)).toEqual(JSON.parse(inside.body));
    expect(verifiedWith(hook.secret, inside)).toEqual(JSON.parse(inside.body));

    // Act: the 24 hours have passed (the stored rotation time moved back past them), and another event.
    await backdateWebhookRotation(acct.accountId, hook.id, new Date(Date.now() - ROTATION_OVERLAP_MS - 1_000));
    await createTicket(acct, 'after the overlap');
    const after = (await eventually(() => (hook.endpoint.received.length === 2 ? hook.endpoint.received : null), 15_000, 'delivery after the overlap'))![1];

    // Assert: one signature, the new secret's; the old one no longer verifies.
    expect(after.signature.split(' ')).toHaveLength(1);
    expect(verifiedWith(fresh, after)).toEqual(JSON.parse(after.body));
    expect(verifiedWith(hook.secret, after)).toBeNull();
  });

  it('is audited as signingSecretRotatedAt, never with a secret; a second rotation drops the oldest secret', async () => {
    // Arrange
    const acct = await account();
    const hook = await webhook(acct);

    // Act
    const first = await client.request('POST', `${BASE}/${hook.id}/rotate_secret`, { token: acct.ownerKey });
    const second = await client.request('POST', `${BASE}/${hook.id}/rotate_secret`, { token: acct.ownerKey });
    await createTicket(acct, 'after two rotations');
    const [r] = (await eventually(() => (hook.endpoint.received.length ? hook.endpoint.received : null), 15_000, 'delivery'))!;

    // Assert: the last two secrets sign, the original does not.
    expect(second.status).toBe(200);
    expect(verifiedWith(second.body.webhook.signingSecret, r)).not.toBeNull();
    expect(verifiedWith(first.body.webhook.signingSecret, r)).not.toBeNull();
    expect(verifiedWith(hook.secret, r)).toBeNull();
    const audits = await client.request('GET', `/helpdesk/api/v1/audits?resource_type=webhook&resource_id=${hook.id}`, { token: acct.ownerKey });
    expect(audits.status, audits.text).toBe(200);
    const rotations = audits.body.audits.filter((a: { changes: { field: string }[] }) => a.changes.some((c) => c.field === 'signingSecretRotatedAt'));
    expect(rotations).toHaveLength(2);
    expect(rotations[0]).toMatchObject({
      actor: { type: 'user', id: acct.ownerId },
      via: 'api',
      changes: [{ field: 'signingSecretRotatedAt', from: null, to: first.body.webhook.signingSecretRotatedAt }],
    });
    for (const secret of [hook.secret, first.body.webhook.signingSecret, second.body.webhook.signingSecret]) expect(audits.text).not.toContain(secret.slice(6));
  });

  it('needs the admin role and the own account', async () => {
    const acct = await account();
    const other = await account();
    const agent = await acct.addUser('member');
    const hook = await webhook(acct);
    for (const path of ['rotate_secret', 'test']) {
      expect((await client.request('POST', `${BASE}/${hook.id}/${path}`, { token: agent.key })).status, path).toBe(403);
      const res = await client.request('POST', `${BASE}/${hook.id}/${path}`, { token: other.ownerKey });
      expect(res.status, path).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect(hook.endpoint.received).toHaveLength(0);
  });
});

describe('test delivery', () => {
  it('sends one signed webhook.test now, answers the outcome, logs it, and never retries or redelivers it', async () => {
    // Arrange: an inactive webhook (a receiver is tried before going live).
    const acct = await account();
    const hook = await webhook(acct, undefined, { active: false });

    // Act
    const res = await client.request('POST', `${BASE}/${hook.id}/test`, { token: acct.ownerKey });

    // Assert
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ delivery: { status: 'delivered', responseStatus: 204, durationMs: expect.any(Number), error: null } });
    expect(res.body.delivery.durationMs).toBeGreaterThanOrEqual(0);
    expect(hook.endpoint.received).toHaveLength(1);
    const [r] = hook.endpoint.received;
    expect(r.id).toMatch(/^evt_/);
    expect(r.verified).toEqual({ event: 'webhook.test', timestamp: expect.any(String), data: { webhookId: hook.id } });
    expect(Object.keys(JSON.parse(r.body))).toEqual(['event', 'timestamp', 'data']);
    const log = await deliveries(acct, hook.id);
    expect(log).toEqual([expect.objectContaining({ eventId: r.id, eventType: 'webhook.test', attempt: 1, statusCode: 204, error: null, state: 'succeeded', nextAttemptAt: null })]);
    const again = await client.request('POST', `${BASE}/${hook.id}/deliveries/${log[0].deliveryId}/redeliver`, { token: acct.ownerKey });
    expect(again.status).toBe(409);
    await pipeline().drained({ delayed: true });
    expect(hook.endpoint.received).toHaveLength(1);
  });

  it('reports a failing receiver as failed with its status, once: no retry, and the webhook stays as it was', async () => {
    // Arrange
    const acct = await account();
    const failing = await webhook(acct, () => ({ status: 500 }));
    const gone = await webhook(acct, () => ({ status: 410 }));

    // Act
    const res = await client.request('POST', `${BASE}/${failing.id}/test`, { token: acct.ownerKey });
    const goneRes = await client.request('POST', `${BASE}/${gone.id}/test`, { token: acct.ownerKey });

    // Assert
    expect(res.body).toEqual({ delivery: { status: 'failed', responseStatus: 500, durationMs: expect.any(Number), error: null } });
    expect(goneRes.body.delivery).toMatchObject({ status: 'failed', responseStatus: 410 });
    expect((await deliveries(acct, failing.id))[0]).toMatchObject({ eventType: 'webhook.test', statusCode: 500, state: 'failed', nextAttemptAt: null });
    await pipeline().drained({ delayed: true });
    expect(failing.endpoint.received).toHaveLength(1);
    expect(gone.endpoint.received).toHaveLength(1);
    // A test is outside the failing rule: a 410 here switches nothing off.
    expect((await client.request('GET', `${BASE}/${gone.id}`, { token: acct.ownerKey })).body.webhook).toMatchObject({ active: true, disabledReason: null });
  });
});
