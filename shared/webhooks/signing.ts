import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';

/** decisions §7: `whsec_` + base64 of 32 random bytes. */
export const newSigningSecret = (): string => PREFIX + randomBytes(32).toString('base64');

/**
 * Standard Webhooks signature: `v1,` + base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`,
 * keyed with the base64-decoded part of the secret after `whsec_`.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The three Standard Webhooks headers of one attempt; the timestamp is the
 * attempt's own, so receivers' replay windows hold on retries. Several
 * secrets (a rotation's overlap, newest first) give one signature each,
 * space separated, as Standard Webhooks allows: a receiver accepts the
 * request when any of them verifies with the secret it holds.
 */
export function signedHeaders(secrets: string | readonly string[], id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = (typeof secrets === 'string' ? [secrets] : secrets).map((secret) => sign(secret, id, timestamp, body));
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}

/** decisions §18: after a rotation, deliveries are signed with the previous secret too for this long. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

/** A webhook's secrets as stored: the current one, and the one it replaced with the time of that rotation. */
export interface WebhookSecrets {
  signingSecret: string;
  previousSigningSecret: string | null;
  signingSecretRotatedAt: string | null;
}

/** The secrets a delivery at `now` is signed with, newest first: the current one, and the previous one within 24 hours of its rotation. */
export function liveSecrets(w: WebhookSecrets, now: Date): string[] {
  const overlapping = w.previousSigningSecret && w.signingSecretRotatedAt && now.getTime() < Date.parse(w.signingSecretRotatedAt) + ROTATION_OVERLAP_MS;
  return overlapping ? [w.signingSecret, w.previousSigningSecret!] : [w.signingSecret];
}
