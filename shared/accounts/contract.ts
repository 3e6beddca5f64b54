import { defineRoutes } from '../http/contract.ts';
import { ApiKeyIdParamsSchema, ApiKeyListSchema, CreateApiKeyBodySchema, CreatedApiKeySchema } from './model.ts';

const BASE = '/playbook/api/v1/api-keys';

const SCOPE_NOTE = 'Key management needs the users:write scope (a session token has every scope); a call made with an API key lacking it is 403 naming the scope.';

/**
 * API keys of the user-management interface (decisions §18). Served by the
 * users function: user-management resources, in its envelope and roles.
 */
export const apiKeyRoutes = defineRoutes([
  {
    operationId: 'createApiKey',
    method: 'POST',
    path: BASE,
    group: 'users',
    summary: 'Create an API key',
    description: `The key acts as its user, with that user's role, further limited by its scopes: users:read allows GET under /playbook, users:write every method there; desk:read and desk:write the same under /helpdesk. scopes defaults to all four; expires_at (at most 1 year ahead) to none; user_id (owners and admins only; not the owner, for an admin) to the caller. A call made with an API key can create keys only within that key's own scopes (403 otherwise) and, if that key expires, only keys that expire no later than it (expires_at missing or later: 422 naming expires_at). The answer's key is shown only here: a repeat under the same Idempotency-Key answers the first answer without key, which is never stored. ${SCOPE_NOTE}`,
    body: CreateApiKeyBodySchema,
    success: { status: 201, description: 'The created key, with the key itself (shown once)', schema: CreatedApiKeySchema },
    shownOnce: ['key'],
    errors: [400, 403, 422],
  },
  {
    operationId: 'listApiKeys',
    method: 'GET',
    path: BASE,
    group: 'users',
    summary: 'List API keys',
    description: `The live (not revoked) keys the caller may manage, newest first: owners and admins all of the account's, others their own. Expired keys are listed until revoked. Never the key itself. ${SCOPE_NOTE}`,
    success: { status: 200, description: 'The keys', schema: ApiKeyListSchema },
    errors: [403],
  },
  {
    operationId: 'revokeApiKey',
    method: 'DELETE',
    path: `${BASE}/{key_id}`,
    group: 'users',
    summary: 'Revoke an API key',
    description: `Revokes at once: the key is refused from the next request on, the authorizer cache included. Owners and admins may revoke any key of the account, others their own (another user's key is 404). ${SCOPE_NOTE}`,
    params: ApiKeyIdParamsSchema,
    success: { status: 204, description: 'Revoked' },
    errors: [403, 404],
  },
]);
