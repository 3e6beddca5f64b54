/**
 * What other modules may use of accounts: whether an account exists (the
 * email channel's recipients). The authorizer's resolution of a credential is
 * this module's own (./authenticate.ts); an API key's lookup by hash, which
 * the users module also keeps in step, is shared/auth/key-lookups.ts.
 * Everything else about accounts and API keys stays behind this module's
 * service.
 */
export { getAccount } from './repository.ts';
export type { AccountRecord } from './repository.ts';
