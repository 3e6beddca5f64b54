import { createHmac } from 'node:crypto';
import { env } from '../config/env.ts';

type SecretLoader = (secretId: string) => Promise<string>;

/**
 * In Lambda the secret comes from the AWS Parameters and Secrets extension
 * (a localhost HTTP call, cached by the extension), which keeps the Secrets
 * Manager SDK client out of every bundle. Tools outside Lambda (the admin CLI)
 * install an SDK-based loader instead.
 */
let loader: SecretLoader = async (secretId) => {
  const port = process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? '2773';
  const res = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(secretId)}`, {
    headers: { 'X-Aws-Parameters-Secrets-Token': process.env.AWS_SESSION_TOKEN ?? '' },
  });
  if (!res.ok) throw new Error(`Secrets extension answered ${res.status}`);
  const body = (await res.json()) as { SecretString?: string };
  if (!body.SecretString) throw new Error('Session secret is empty');
  return body.SecretString;
};

export function setSecretLoader(next: SecretLoader): void {
  loader = next;
  secret = undefined;
}

let secret: Promise<string> | undefined;

/** The per-deployment HS256 secret: SESSION_SECRET locally, the Secrets Manager secret when deployed. */
export function sessionSecret(): Promise<string> {
  if (!secret) {
    const { SESSION_SECRET, SESSION_SECRET_ARN } = env();
    secret = SESSION_SECRET ? Promise.resolve(SESSION_SECRET) : loader(SESSION_SECRET_ARN!);
    secret.catch(() => (secret = undefined));
  }
  return secret;
}

/** A key for one purpose derived from the session secret, so tokens and cursors never share a key. */
export async function derivedKey(purpose: 'session' | 'cursor'): Promise<Buffer> {
  return createHmac('sha256', await sessionSecret()).update(`support-desk:${purpose}`).digest();
}
