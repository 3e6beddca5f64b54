import { createHmac } from 'node:crypto';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { env } from '../config/env.ts';

let secret: Promise<string> | undefined;

/**
 * The per-deployment HS256 secret: from SESSION_SECRET locally, from Secrets
 * Manager in a deployed stack (fetched once per cold start).
 */
export function sessionSecret(): Promise<string> {
  if (!secret) {
    const { SESSION_SECRET, SESSION_SECRET_ARN, AWS_REGION } = env();
    secret = SESSION_SECRET
      ? Promise.resolve(SESSION_SECRET)
      : new SecretsManagerClient({ region: AWS_REGION })
          .send(new GetSecretValueCommand({ SecretId: SESSION_SECRET_ARN }))
          .then((r) => {
            if (!r.SecretString) throw new Error('Session secret is empty');
            return r.SecretString;
          });
    secret.catch(() => (secret = undefined));
  }
  return secret;
}

/** A key for one purpose derived from the session secret, so tokens and cursors never share a key. */
export async function derivedKey(purpose: 'session' | 'cursor'): Promise<Buffer> {
  return createHmac('sha256', await sessionSecret()).update(`support-desk:${purpose}`).digest();
}
