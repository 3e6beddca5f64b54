import { createHmac, timingSafeEqual } from 'node:crypto';
import { derivedKey, verifiesWithSessionKey } from './secret.ts';

export interface SessionClaims {
  sub: string;
  acct: string;
  iat: number;
  exp: number;
}

const b64url = (b: Buffer | string) => Buffer.from(b).toString('base64url');
const HEADER = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));

/** Sign an HS256 session JWT. */
export async function signSessionToken(accountId: string, userId: string, ttlSeconds: number, now = Date.now()): Promise<{ token: string; expiresAt: string }> {
  const iat = Math.floor(now / 1000);
  const claims: SessionClaims = { sub: userId, acct: accountId, iat, exp: iat + ttlSeconds };
  const body = `${HEADER}.${b64url(JSON.stringify(claims))}`;
  const sig = createHmac('sha256', await derivedKey('session'))
    .update(body)
    .digest();
  return { token: `${body}.${b64url(sig)}`, expiresAt: new Date(claims.exp * 1000).toISOString() };
}

/** Verify signature, algorithm and expiry; returns the claims or null. */
export async function verifySessionToken(token: string, now = Date.now()): Promise<SessionClaims | null> {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [h, p, s] = parts;
  let header: { alg?: unknown };
  let claims: Partial<SessionClaims>;
  try {
    header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8'));
    claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (header?.alg !== 'HS256') return null;
  const given = Buffer.from(s, 'base64url');
  const signedBy = (key: Buffer) => {
    const expected = createHmac('sha256', key).update(`${h}.${p}`).digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!(await verifiesWithSessionKey('session', signedBy))) return null;
  if (typeof claims?.sub !== 'string' || typeof claims.acct !== 'string' || typeof claims.exp !== 'number' || typeof claims.iat !== 'number') return null;
  if (claims.exp * 1000 <= now) return null;
  return claims as SessionClaims;
}
