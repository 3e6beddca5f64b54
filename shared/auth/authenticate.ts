import { UnauthorizedError } from '../domain/errors.ts';
import { getApiKeyByHash, getUserAndAccount } from '../accounts/api.ts';
import { hashApiKey, looksLikeApiKey } from './api-keys.ts';
import { verifySessionToken } from './jwt.ts';
import { PLANS, type Plan, type Principal } from './principal.ts';

export interface Authenticated {
  principal: Principal;
  /** The account's API Gateway key value, when it has one (deployed stacks). */
  usageKeyValue?: string;
}

/**
 * Resolve `Authorization: Bearer <API key | session token>` to a principal.
 * Refuses unknown or revoked keys, bad or expired tokens, and suspended or
 * deleted users (decisions §1). At most one DynamoDB round trip: GetItem of
 * the key's lookup, or one BatchGetItem of user and account for a session.
 */
export async function authenticate(authorization: string | undefined): Promise<Authenticated> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new UnauthorizedError('Missing or malformed Authorization header; expected "Bearer <API key or session token>"');
  const credential = match[1];

  if (looksLikeApiKey(credential)) {
    // One GetItem: the key's lookup carries the principal, kept in step with the user and the account.
    const key = await getApiKeyByHash(hashApiKey(credential));
    if (!key) throw new UnauthorizedError('Invalid or revoked API key');
    if (key.role && key.status && key.plan) {
      if (key.status === 'suspended') throw new UnauthorizedError('The user is suspended');
      return {
        principal: { accountId: key.accountId, userId: key.userId, role: key.role, plan: planOf(key.plan), credential: 'api_key' },
        usageKeyValue: key.usageKeyValue,
      };
    }
    // A lookup written before it carried the principal: resolve it from the user and account.
    return fromUser(key.accountId, key.userId, 'api_key');
  }
  const claims = await verifySessionToken(credential);
  if (!claims) throw new UnauthorizedError('Invalid or expired session token');
  return fromUser(claims.acct, claims.sub, 'session');
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
