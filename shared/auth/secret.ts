import { createHmac } from 'node:crypto';
import { env } from '../config/env.ts';
import { readSecret, setBaseSecretLoader, type SecretLoader } from '../config/secrets.ts';

/** Replace how secrets are read (the admin CLI uses the SDK outside Lambda); the cached session secret is dropped. */
export function setSecretLoader(next: SecretLoader): void {
  setBaseSecretLoader(next);
  secret = undefined;
}

let secret: Promise<string> | undefined;

/** The per-deployment HS256 secret: SESSION_SECRET locally, the Secrets Manager secret when deployed. */
export function sessionSecret(): Promise<string> {
  if (!secret) {
    const { SESSION_SECRET, SESSION_SECRET_ARN } = env();
    secret = SESSION_SECRET ? Promise.resolve(SESSION_SECRET) : readSecret(SESSION_SECRET_ARN!);
    secret.catch(() => (secret = undefined));
  }
  return secret;
}

/** A key for one purpose derived from the session secret, so tokens and cursors never share a key. */
export async function derivedKey(purpose: 'session' | 'cursor'): Promise<Buffer> {
  return createHmac('sha256', await sessionSecret()).update(`support-desk:${purpose}`).digest();
}
