import { describe, expect, it } from 'vitest';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { createTestAccount, useGateway } from '../support/api.ts';

// The deployed behaviour for this file's functions: the SSRF guard on (the local stack allows loopback targets otherwise).
process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS = '0';
const { client } = useGateway();
const receiver = useReceiver();
const BASE = '/helpdesk/api/v1/webhooks';

describe('test delivery under the SSRF rules (decisions §7, §18)', () => {
  it.each([
    ['a loopback address', (port: string) => `https://127.0.0.1:${port}/refused`, 'target address is disallowed'],
    ['a name that resolves to loopback', (port: string) => `https://localhost:${port}/refused`, 'target resolves to a disallowed address'],
  ])('refuses %s: failed with the SSRF reason, nothing sent, logged', async (_what, target, reason) => {
    // Arrange: a receiver that would answer 204, behind a refused address.
    const acct = await createTestAccount();
    const port = new URL(receiver().url('/')).port;
    const created = await client.request('POST', BASE, { token: acct.ownerKey, body: { webhook: { name: 'internal', targetUrl: target(port), events: ['ticket.created'] } } });
    expect(created.status, created.text).toBe(201);
    const endpoint = receiver().endpoint('/refused', created.body.webhook.signingSecret);

    // Act
    const res = await client.request('POST', `${BASE}/${created.body.webhook.id}/test`, { token: acct.ownerKey });

    // Assert
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ delivery: { status: 'failed', responseStatus: null, durationMs: expect.any(Number), error: reason } });
    expect(res.text).not.toContain('127.0.0.1');
    expect(endpoint.received).toHaveLength(0);
    const log = await client.request('GET', `${BASE}/${created.body.webhook.id}/deliveries`, { token: acct.ownerKey });
    expect(log.body.deliveries).toEqual([expect.objectContaining({ eventType: 'webhook.test', attempt: 1, statusCode: null, error: reason, state: 'failed', nextAttemptAt: null })]);
  });
});
