import { bindEntity } from '../db/entity.ts';
import { idempotencyEntities } from '../db/entities/idempotency.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { writeNow, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';

/** One Idempotency-Key of an account: in progress, or the first answer, kept for 24 hours. */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'running' | 'done';
  /** When the running request took the key (ms); a lock older than the function's time limit belongs to a dead request. */
  startedAt: number;
  status?: number;
  /** The first answer's body, gzip-compressed (a ticket answer can approach DynamoDB's 400 KB item limit). */
  body?: Uint8Array;
  /** Epoch seconds; DynamoDB's TTL removes the item, and reads treat it as gone from then on. */
  expiresAt: number;
}

/** The key of an item: the account and the SHA-256 of the Idempotency-Key (neither is stored as an attribute). */
interface KeyValues {
  accountId: string;
  keyHash: string;
}

const idempotencyKeys = bindEntity<IdempotencyRecord & KeyValues>(idempotencyEntities.idempotencyKey, {
  fields: ['fingerprint', 'state', 'startedAt', 'status', 'body', 'expiresAt'],
  renames: { expiresAt: TTL_ATTRIBUTE },
  normalize: ({ status, body, ...r }) => ({ ...r, ...(status != null ? { status } : {}), ...(body != null ? { body } : {}) }),
});

const conditionFailed = (err: unknown) => (err as Error).name === 'ConditionalCheckFailedException';

/**
 * Take the key for a new request: succeeds when no live record exists, or the
 * record is a lock left by a request that can no longer be running.
 */
export async function claimKey(accountId: string, keyHash: string, fingerprint: string, now: number, ttlSeconds: number, staleLockMs: number): Promise<boolean> {
  const nowSec = Math.floor(now / 1000);
  const claim = idempotencyKeys.put(
    { accountId, keyHash, fingerprint, state: 'running', startedAt: now, expiresAt: nowSec + ttlSeconds },
    {
      expr: 'attribute_not_exists(pk) OR #exp < :nowSec OR (#state = :running AND startedAt < :stale AND fingerprint = :fp)',
      names: { '#exp': TTL_ATTRIBUTE, '#state': 'state' },
      values: { ':nowSec': nowSec, ':running': 'running', ':stale': now - staleLockMs, ':fp': fingerprint },
    },
  );
  try {
    await writeNow(claim);
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/** The live record of a key (strongly consistent: a replay must see the answer just recorded). */
export async function getKey(accountId: string, keyHash: string, now: number): Promise<IdempotencyRecord | null> {
  const record = await idempotencyKeys.get({ accountId, keyHash }, { consistent: true });
  if (!record || Number(record.expiresAt) < Math.floor(now / 1000)) return null;
  return record;
}

/** Record the first answer under the key the request holds. */
export async function completeKey(accountId: string, keyHash: string, fingerprint: string, status: number, body: Uint8Array | undefined): Promise<void> {
  await writeNow(
    idempotencyKeys.updateAttributes({ accountId, keyHash }, { set: { state: 'done', status, ...(body ? { body } : {}) } }, { expr: 'fingerprint = :fp', values: { ':fp': fingerprint } }),
  );
}

/** Thrown when the key a request claimed is no longer its own (released, or taken over as a stale lock): its create must not commit. */
export class KeyNotHeldError extends ConflictError {}

/**
 * The first answer recorded in the transaction of the create itself: the
 * create commits only while the key is still the running claim of this
 * request (`startedAt`), and once it has committed the key holds its answer,
 * whatever becomes of the request.
 */
export function answerWrite(accountId: string, keyHash: string, fingerprint: string, startedAt: number, status: number, body: Uint8Array | undefined): TxWrite {
  return idempotencyKeys.updateAttributes(
    { accountId, keyHash },
    { set: { state: 'done', status, ...(body ? { body } : {}) } },
    {
      expr: '#state = :running AND fingerprint = :fp AND startedAt = :started',
      names: { '#state': 'state' },
      values: { ':running': 'running', ':fp': fingerprint, ':started': startedAt },
      error: () => new KeyNotHeldError('This request no longer holds its Idempotency-Key; retry it with the same key'),
    },
  );
}

/** Let the key go after a failed request, so the client can retry with it: only this request's claim (`startedAt`), only while running. */
export async function releaseKey(accountId: string, keyHash: string, fingerprint: string, startedAt: number): Promise<void> {
  const release = idempotencyKeys.delete(
    { accountId, keyHash },
    {
      expr: '#state = :running AND fingerprint = :fp AND startedAt = :started',
      names: { '#state': 'state' },
      values: { ':running': 'running', ':fp': fingerprint, ':started': startedAt },
    },
  );
  await writeNow(release).catch((err: unknown) => {
    if (!conditionFailed(err)) throw err;
  });
}
