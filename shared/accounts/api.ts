/**
 * What other modules may use of accounts: the authorizer's reads (a key's
 * lookup by hash; a session's user and account in one round trip) and its
 * hourly record of a key's use (recordApiKeyUse), and the writes that keep a
 * user's key lookups in step with the user, in the users module's
 * transactions (a new role or status; the user deleted); whether an account
 * exists (the email channel's recipients). Everything else
 * about accounts and API keys stays behind this module's service.
 */
export { apiKeyLookupDeletes, apiKeyLookupWrites, getAccount, getApiKeyByHash, getUserAndAccount, recordApiKeyUse } from './repository.ts';
export type { AccountRecord, ApiKeyLookup } from './repository.ts';
