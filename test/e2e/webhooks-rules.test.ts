import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { routeEvent, RULES } from '#app/bus-rules.ts';
import { QUEUES } from '#app/topology.ts';
import { MAX_ATTEMPTS, parseRetryAfter, retryDelaySeconds } from '#shared/webhooks/delivery.ts';
import { liveSecrets, newSigningSecret, ROTATION_OVERLAP_MS, signedHeaders } from '#shared/webhooks/signing.ts';
import { isBlockedAddress, postToTarget, TargetRefusedError } from '#shared/webhooks/target.ts';

// Pure rules of the webhook pipeline (no emulator needed); kept beside the webhook e2e tests.
describe('webhook signing', () => {
  it('produces headers the standardwebhooks package verifies', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ event: 'ticket.deleted', timestamp: '2025-01-01T00:00:00.000Z', data: { ticket: { id: 'tkt_1' } } });
    const headers = signedHeaders(secret, 'evt_1', body, new Date());
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('during a rotation signs with both secrets, space separated, and either verifies; after it only the new one', () => {
    const [fresh, old] = [newSigningSecret(), newSigningSecret()];
    const body = JSON.stringify({ event: 'ticket.deleted', timestamp: '2025-01-01T00:00:00.000Z', data: { ticket: { id: 'tkt_1' } } });
    const rotatedAt = new Date();
    const secrets = { signingSecret: fresh, previousSigningSecret: old, signingSecretRotatedAt: rotatedAt.toISOString() };

    const during = signedHeaders(liveSecrets(secrets, rotatedAt), 'evt_1', body, rotatedAt);
    const afterwards = signedHeaders(liveSecrets(secrets, new Date(rotatedAt.getTime() + ROTATION_OVERLAP_MS)), 'evt_1', body, rotatedAt);

    expect(during['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(new Webhook(fresh).verify(body, during)).toEqual(JSON.parse(body));
    expect(new Webhook(old).verify(body, during)).toEqual(JSON.parse(body));
    expect(afterwards['webhook-signature']).toMatch(/^v1,\S+$/);
    expect(new Webhook(fresh).verify(body, afterwards)).toEqual(JSON.parse(body));
    expect(() => new Webhook(old).verify(body, afterwards)).toThrow();
  });
});

describe('retry schedule', () => {
  it('waits 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (+ up to 20%) for 8 attempts in all', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect([1, 2, 3, 4, 5, 6, 7].map((t) => retryDelaySeconds(t, null, 1, 0))).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(retryDelaySeconds(3, null, 1, 1)).toBe(2160);
  });
  it('honours a longer Retry-After, ignores a shorter one, and stays within the 12 h visibility limit', () => {
    expect(retryDelaySeconds(1, 120, 1, 0)).toBe(120);
    expect(retryDelaySeconds(3, 10, 1, 0)).toBe(1800);
    expect(retryDelaySeconds(7, 86_400, 1, 0)).toBeLessThan(12 * 3600);
    expect(parseRetryAfter('30', new Date())).toBe(30);
    expect(parseRetryAfter(new Date(Date.now() + 60_000).toUTCString(), new Date())).toBeGreaterThanOrEqual(59);
    expect(parseRetryAfter('soon', new Date())).toBeNull();
  });
});

describe('SSRF guard', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:a9fe:a9fe'])(
    'blocks %s',
    (ip) => {
      expect(isBlockedAddress(ip)).toBe(true);
    },
  );
  it.each(['93.184.216.34', '2606:4700::6810:85e5', '8.8.8.8'])('allows %s', (ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });
  it('refuses loopback targets by IP and by name (checked after DNS) when private targets are not allowed', async () => {
    const policy = { allowPrivate: false, allowInsecureTls: false, timeoutMs: 2000 };
    await expect(postToTarget('https://127.0.0.1:9/x', {}, '{}', policy)).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(postToTarget('https://localhost:9/x', {}, '{}', policy)).rejects.toThrow(/disallowed address/);
  });
});

describe('topology', () => {
  it('routes every ticket event to the webhook fan-out (and to automations, SLA, view counts and attachment clean-up where they need it), and each rule to a defined queue', () => {
    // View counts (decisions §21) follow each create, change and delete of a ticket.
    const expected: Record<string, string[]> = {
      'ticket.created': ['webhook-fanout', 'automations', 'sla', 'view-counts'],
      'ticket.updated': ['webhook-fanout', 'automations', 'sla', 'view-counts'],
      'ticket.deleted': ['webhook-fanout', 'sla', 'attachment-cleanup', 'view-counts'],
      'ticket.assignment.changed': ['webhook-fanout'],
      // A resolved ticket may owe its requester a satisfaction survey (decisions §24).
      'ticket.resolved': ['webhook-fanout', 'email-sender', 'sla'],
      'ticket.merged': ['webhook-fanout'],
      'ticket.rated': ['webhook-fanout'],
    };
    for (const [t, queues] of Object.entries(expected)) expect(routeEvent({ source: 'support-desk.tickets', detailType: t })).toEqual(queues);
    expect(routeEvent({ source: 'support-desk.tickets', detailType: 'ticket.exploded' })).toEqual([]);
    expect(routeEvent({ source: 'support-desk.webhooks', detailType: 'webhook.disabled' })).toEqual(['email-sender']);
    for (const r of RULES) expect(QUEUES.map((q) => q.name)).toContain(r.queue);
    for (const q of QUEUES) expect(q.visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * q.functionTimeoutSeconds);
  });
});
