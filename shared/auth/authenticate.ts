import { UnauthorizedError } from '../domain/errors.ts';
import { getApiKeyByHash } from '../accounts/repository.ts';
import { getUserAndAccount } from '../users/repository.ts';
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
 * deleted users (decisions §1).
 */
export async function authenticate(authorization: string | undefined): Promise<Authenticated> {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) throw new UnauthorizedError('Missing or malformed Authorization header; expected "Bearer <API key or session token>"');
  const credential = match[1];

  let accountId: string;
  let userId: string;
  let kind: Principal['credential'];
  if (looksLikeApiKey(credential)) {
    const key = await getApiKeyByHash(hashApiKey(credential));
    if (!key) throw new UnauthorizedError('Invalid or revoked API key');
    ({ accountId, userId } = key);
    kind = 'api_key';
  } else {
    const claims = await verifySessionToken(credential);
    if (!claims) throw new UnauthorizedError('Invalid or expired session token');
    accountId = claims.acct;
    userId = claims.sub;
    kind = 'session';
  }

  const { user, account } = await getUserAndAccount(accountId, userId);
  if (!user || !account) throw new UnauthorizedError('The credential\'s user no longer exists');
  if (user.status === 'suspended') throw new UnauthorizedError('The user is suspended');
  const plan = PLANS.includes(account.plan as Plan) ? (account.plan as Plan) : 'free';
  return {
    principal: { accountId, userId, role: user.role, plan, credential: kind },
    usageKeyValue: typeof account.usageKeyValue === 'string' ? account.usageKeyValue : undefined,
  };
}
