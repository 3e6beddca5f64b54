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

/** The three Standard Webhooks headers of one attempt; the timestamp is the attempt's own, so receivers' replay windows hold on retries. */
export function signedHeaders(secret: string, id: string, body: string, now: Date): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': sign(secret, id, timestamp, body) };
}
