import { createHmac } from 'node:crypto';
import { readSecret, setBaseSecretLoader, type SecretLoader } from '../config/secrets.ts';
import { sessionSecretSettings } from './settings.ts';

/**
 * The Parameters and Secrets extension caches a secret for 300 s by default;
 * keeping our copy as long means a rotation reaches every warm container
 * within about two of those periods, without a call per request.
 */
export const SESSION_SECRET_TTL_MS = 300_000;

type Purpose = 'session' | 'cursor';

interface Source {
  /** Where the session secret is read through the loader; unset means the fixed local values. */
  secretId?: string;
  now: () => number;
}

interface Cached {
  value: Promise<string | undefined>;
  readAt: number;
}

let source: Source | undefined;
let current: Cached | undefined;
let previous: Cached | undefined;

function activeSource(): Source {
  if (!source) {
    const { SESSION_SECRET, SESSION_SECRET_ARN } = sessionSecretSettings();
    source = { secretId: SESSION_SECRET ? undefined : SESSION_SECRET_ARN, now: Date.now };
  }
  return source;
}

/**
 * Replace how secrets are read (the admin CLI uses the SDK outside Lambda).
 * Tests may also name the secret to read instead of the fixed SESSION_SECRET,
 * and a clock, to see the cache expire. The cached session keys are dropped.
 */
export function setSecretLoader(next: SecretLoader, options: { secretId?: string; now?: () => number } = {}): void {
  setBaseSecretLoader(next);
  const base = activeSource();
  source = { secretId: options.secretId ?? base.secretId, now: options.now ?? base.now };
  current = previous = undefined;
}

function cached(slot: Cached | undefined, now: number, read: () => Promise<string | undefined>): Cached {
  if (slot && now - slot.readAt < SESSION_SECRET_TTL_MS) return slot;
  return { value: read(), readAt: now };
}

/** The per-deployment HS256 secret: SESSION_SECRET locally, the Secrets Manager secret (AWSCURRENT) when deployed. */
export function sessionSecret(): Promise<string> {
  const { secretId, now } = activeSource();
  const at = now();
  const slot = cached(current, at, () => (secretId ? readSecret(secretId) : Promise.resolve(sessionSecretSettings().SESSION_SECRET!)));
  if (slot !== current) {
    current = slot;
    // A failed read is not kept: the next request tries again instead of failing for five minutes.
    slot.value.catch(() => {
      if (current === slot) current = undefined;
    });
  }
  return slot.value as Promise<string>;
}

/**
 * The key before the last rotation (AWSPREVIOUS), or undefined when there is
 * none. Read only after the current key failed to verify something; "none"
 * (the secret was never rotated) is kept for the TTL too, so forged tokens
 * cannot make every request call the extension.
 */
function previousSecret(): Promise<string | undefined> {
  const { secretId, now } = activeSource();
  previous = cached(previous, now(), () => (secretId ? readSecret(secretId, 'AWSPREVIOUS').catch(() => undefined) : Promise.resolve(sessionSecretSettings().SESSION_SECRET_PREVIOUS)));
  return previous.value;
}

const derive = (secret: string, purpose: Purpose) => createHmac('sha256', secret).update(`support-desk:${purpose}`).digest();

/** The key that signs for one purpose, derived from the current session secret, so tokens and cursors never share a key. */
export async function derivedKey(purpose: Purpose): Promise<Buffer> {
  return derive(await sessionSecret(), purpose);
}

/**
 * Whether `matches` accepts the key of this purpose derived from the current
 * secret or, during a rotation window, from the previous one: what was signed
 * just before a rotation keeps verifying until the next rotation.
 */
export async function verifiesWithSessionKey(purpose: Purpose, matches: (key: Buffer) => boolean): Promise<boolean> {
  if (matches(await derivedKey(purpose))) return true;
  const old = await previousSecret();
  return old !== undefined && matches(derive(old, purpose));
}
