import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { accountEntities } from '../db/entities/accounts.ts';
import type { TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import type { Plan, UserRole, UserStatus } from './principal.ts';
import { SCOPES, type Scope } from './scopes.ts';

/**
 * An API key's global lookup by its hash: what resolves a presented key in
 * one GetItem (the authorizer). Its own item kind, below the modules that
 * keep it in step: accounts (a key created or revoked, the plan changed, a
 * use recorded) and users (a role or status changed, the user deleted), each
 * in its own transaction through the writes below.
 */

export interface ApiKeyRecord {
  keyId: string;
  accountId: string;
  userId: string;
  name: string;
  hash: string;
  createdAt: string;
  /** What the key may do on top of its user's role (decisions §18); keys stored before scopes read back with all four. */
  scopes: Scope[];
  /** When the key stops working (ISO 8601), or null: never. */
  expiresAt: string | null;
  /** When the key was first used in the latest hour it was used (recordApiKeyUse), or null. */
  lastUsedAt: string | null;
}

/**
 * What the authorizer needs, copied onto the key's hash lookup so that one
 * GetItem resolves a presented key. Kept in step in the same transactions
 * that change the user's role or status (users service), delete the user,
 * revoke the key, or change the account's plan (updateAccount).
 */
export interface KeyPrincipal {
  role: UserRole;
  status: UserStatus;
  plan: Plan;
  usageKeyValue?: string;
}

export type ApiKeyLookup = ApiKeyRecord & Partial<KeyPrincipal>;

/** Attributes an item may lack are undefined on the record, as they were before it was read. */
const withoutNulls = <R extends object>(r: R): R => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== null)) as R;

export const API_KEY_FIELDS = ['keyId', 'accountId', 'userId', 'name', 'hash', 'createdAt', 'scopes', 'expiresAt', 'lastUsedAt'] as const;
/** `expiresAt` is the table's TTL attribute (epoch seconds): a key's expiry is stored under its own name, and the item is kept. */
export const API_KEY_RENAMES = { expiresAt: 'keyExpiresAt' } as const;
/** Keys stored before scopes and expiry read back with every scope and no expiry (and no use recorded). */
export const keyDefaults = <R extends Partial<ApiKeyRecord>>(r: R): R => ({ ...r, scopes: r.scopes ?? [...SCOPES], expiresAt: r.expiresAt ?? null, lastUsedAt: r.lastUsedAt ?? null });

// Lookups written before they carried the principal lack it: the authorizer then reads user and account.
const keyLookups = bindEntity<ApiKeyLookup>(accountEntities.apiKeyHash, {
  fields: [...API_KEY_FIELDS, 'role', 'status', 'plan', 'usageKeyValue'],
  renames: API_KEY_RENAMES,
  normalize: (r) => keyDefaults(withoutNulls(r)),
});

const withoutUndefined = (o: object) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** The write that stores a new key's lookup, carrying the principal. */
export const keyLookupPut = (k: ApiKeyRecord, principal: KeyPrincipal): TxWrite => keyLookups.put({ ...k, ...principal }, conditions.absent());

/** The write that drops a key's lookup: the key stops working. */
export const keyLookupDelete = (hash: string): TxWrite => keyLookups.delete({ hash });

/** Set role, status, plan or usage key on a live key lookup (not on a revoked one: `error`). */
export const keyLookupUpdate = (hash: string, values: Partial<KeyPrincipal>, error: () => Error): TxWrite =>
  keyLookups.updateAttributes({ hash }, { set: withoutUndefined(values) }, conditions.present(error));

/** The writes that give the user's key lookups a new role or status, in the user's transaction; a lookup revoked meanwhile fails it. */
export function apiKeyLookupWrites(hashes: readonly string[], values: Partial<Pick<KeyPrincipal, 'role' | 'status'>>): TxWrite[] {
  return hashes.map((hash) => keyLookupUpdate(hash, values, () => new ConflictError("The user's API keys changed concurrently; retry the request")));
}

/** The writes that delete a user's key lookups with the user: its keys stop working with it. */
export function apiKeyLookupDeletes(hashes: readonly string[]): TxWrite[] {
  return hashes.map(keyLookupDelete);
}

/** Set `lastUsedAt` on a key's lookup, only while its own is older than `hourStart` (else a ConflictError: recorded this hour already). */
export function keyLookupUseWrite(hash: string, at: string, hourStart: string): TxWrite {
  const olderThanHour: Condition = {
    expr: 'attribute_exists(pk) AND (attribute_not_exists(#used) OR attribute_type(#used, :null) OR #used < :hour)',
    names: { '#used': 'lastUsedAt' },
    values: { ':null': 'NULL', ':hour': hourStart },
    error: () => new ConflictError('The key use of this hour is recorded already'),
  };
  return keyLookups.updateAttributes({ hash }, { set: { lastUsedAt: at } }, olderThanHour);
}

/** Resolve a presented key by its hash: the authorizer's one read. */
export async function getApiKeyByHash(hash: string): Promise<ApiKeyLookup | null> {
  return keyLookups.get({ hash });
}
