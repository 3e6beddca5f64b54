import type { APIGatewayAuthorizerResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { authenticate } from '#shared/accounts/authenticate.ts';
import { principalContext } from '#shared/auth/principal.ts';
import { UnauthorizedError } from '#shared/domain/errors.ts';
import { isStoreUnavailable } from '#shared/http/error-map.ts';
import { logger } from '#shared/logger.ts';
import { readFieldsStamp } from '#shared/ticket-fields/stamp.ts';
import { authorizerSettings } from './settings.ts';

const { ANONYMOUS_USAGE_KEY, AUTHORIZER_CACHE_TTL_SECONDS } = authorizerSettings();
const CACHED = AUTHORIZER_CACHE_TTL_SECONDS > 0;

/**
 * REQUEST authorizer. It always allows and says who is calling, or why not,
 * in the context: the group function then answers 401 in its own interface's
 * envelope (API Gateway's own 401 body cannot differ per path). Every answer
 * names a usage-plan key, so the account's tier throttles it as the outer guard.
 */
export async function handler(event: APIGatewayRequestAuthorizerEvent): Promise<APIGatewayAuthorizerResult> {
  const header = event.headers?.Authorization ?? event.headers?.authorization ?? undefined;
  // Allow the whole API, not just this method, so a cached decision fits every route.
  const [arnBase, stage] = event.methodArn.split('/');
  const resource = `${arnBase}/${stage}/*/*`;
  try {
    const { principal, usageKeyValue } = await authenticate(header);
    // A cached answer carries the account's fields stamp, so the group functions keep its field definitions between
    // requests (shared/ticket-fields/stamp.ts); a field change flushes the cache. Uncached, they read them each time.
    if (CACHED) principal.fieldsStamp = await readFieldsStamp(principal.accountId);
    return {
      principalId: principal.userId,
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }] },
      // The key's scopes and expiry ride along, so the group functions check them even on a cached answer.
      context: principalContext(principal),
      usageIdentifierKey: usageKeyValue ?? ANONYMOUS_USAGE_KEY,
    };
  } catch (err) {
    if (isStoreUnavailable(err)) {
      logger.warn('authorizer: store unavailable', { err });
      // A cached answer would outlive the outage: fail this one (API Gateway's AUTHORIZER_FAILURE response, a 503) so nothing is cached.
      if (CACHED) throw new Error('Authorizer unavailable', { cause: err });
      return {
        principalId: 'anonymous',
        policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }] },
        context: { authUnavailable: 'true' },
        usageIdentifierKey: ANONYMOUS_USAGE_KEY,
      };
    }
    if (!(err instanceof UnauthorizedError)) logger.error('authorizer failure', { err });
    const message = err instanceof UnauthorizedError ? err.message : 'Authentication failed';
    return {
      principalId: 'anonymous',
      policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }] },
      context: { authError: message },
      usageIdentifierKey: ANONYMOUS_USAGE_KEY,
    };
  }
}
