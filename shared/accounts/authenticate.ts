import { ConflictError, UnauthorizedError } from '../domain/errors.ts';
import { getApiKeyByHash, type ApiKeyLookup } from '../auth/key-lookups.ts';
import { getUserAndAccount, recordApiKeyUse } from './repository.ts';
import { logger } from '../logger.ts';
import { hashApiKey, hourStart, looksLikeApiKey, useDue } from '../auth/api-keys.ts';
import { verifySessionToken } from '../auth/jwt.ts';
import { keyExpired, keyExpiredMessage, PLANS, type Plan, type Principal } from '../auth/principal.ts';

export interface Authenticated {
  principal: Principal;
  /** The account's API Gateway key value, when it has one (deployed stacks). */
  usageKeyValue?: string;
}

/**
 * Resolve `Authorization: Bearer <API key | session token>` to a principal.
 * Refuses unknown, revoked or expired keys, bad or expired tokens, and
 * suspended or deleted users (decisions §1, §18). One DynamoDB round trip:
 * GetItem of the key's lookup, or one BatchGetItem of user and account for a
 * session; plus, the first time a key is resolved in an hour, the one write
 * that records its use (recordUse).
 */
export async function authenticate(authorization: string | undefined, now = Date.now()): Promise<Authenticated> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new UnauthorizedError('Missing or malformed Authorization header; expected "Bearer <API key or session token>"');
  const credential = match[1];

  if (looksLikeApiKey(credential)) {
    // One GetItem: the key's lookup carries the principal, kept in step with the user and the account.
    const key = await getApiKeyByHash(hashApiKey(credential));
    if (!key) throw new UnauthorizedError('Invalid or revoked API key');
    const limits = { scopes: key.scopes, ...(key.expiresAt ? { keyExpiresAt: key.expiresAt } : {}) };
    if (keyExpired(limits, now)) throw new UnauthorizedError(keyExpiredMessage(key.expiresAt!));
    let found: Authenticated;
    if (key.role && key.status && key.plan) {
      if (key.status === 'suspended') throw new UnauthorizedError('The user is suspended');
      found = {
        principal: { accountId: key.accountId, userId: key.userId, role: key.role, plan: planOf(key.plan), credential: 'api_key' },
        usageKeyValue: key.usageKeyValue,
      };
    } else {
      // A lookup written before it carried the principal: resolve it from the user and account.
      found = await fromUser(key.accountId, key.userId, 'api_key');
    }
    await recordUse(key, now);
    return { ...found, principal: { ...found.principal, ...limits } };
  }
  const claims = await verifySessionToken(credential);
  if (!claims) throw new UnauthorizedError('Invalid or expired session token');
  return fromUser(claims.acct, claims.sub, 'session');
}

/**
 * `last_used_at`, kept to the hour (decisions §18): the first time in an hour
 * that a key is resolved, one conditional transaction records it; every other
 * request writes nothing. Never fails the request: a lost race (another
 * authorizer recorded this hour) or a store error only leaves the hour unrecorded.
 */
async function recordUse(key: ApiKeyLookup, now: number): Promise<void> {
  if (!useDue(key.lastUsedAt, now)) return;
  try {
    await recordApiKeyUse(key, new Date(now).toISOString(), hourStart(now));
  } catch (err) {
    if (!(err instanceof ConflictError)) logger.warn('API key use not recorded', { err, keyId: key.keyId });
  }
}

const planOf = (plan: unknown): Plan => (PLANS.includes(plan as Plan) ? (plan as Plan) : 'free');

/** One BatchGetItem of the user and its account. */
async function fromUser(accountId: string, userId: string, kind: Principal['credential']): Promise<Authenticated> {
  const { user, account } = await getUserAndAccount(accountId, userId);
  if (!user || !account) throw new UnauthorizedError("The credential's user no longer exists");
  if (user.status === 'suspended') throw new UnauthorizedError('The user is suspended');
  return {
    principal: { accountId, userId, role: user.role, plan: planOf(account.plan), credential: kind },
    usageKeyValue: typeof account.usageKeyValue === 'string' ? account.usageKeyValue : undefined,
  };
}
