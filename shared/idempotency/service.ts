import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { TxWrite } from '../db/transact.ts';
import { BadRequestError, ConflictError, ValidationError } from '../domain/errors.ts';
import { logger } from '../logger.ts';
import * as repo from './repository.ts';

/** decisions §3: a repeat within 24 hours answers the first answer again. */
const TTL_SECONDS = 24 * 60 * 60;
/**
 * A lock older than this belongs to a request that cannot still be running (API
 * functions time out well before it), so a retry may take the key over.
 */
const STALE_LOCK_MS = 120_000;
/** Compressed answers above this are not kept (item limit 400 KB); their repeats get 409 instead of a second write. */
const MAX_STORED_BODY = 300_000;

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

/** A request that holds its key until its answer is recorded (or released on failure). */
export interface IdempotencyClaim {
  accountId: string;
  keyHash: string;
  fingerprint: string;
  /** When this request took the key: its create commits only while the key is still this claim (repository answerWrite). */
  startedAt: number;
}

/** The claim a running create holds, with what its answer will be recorded as; `recorded` once its transaction carries the answer. */
export interface HeldKey {
  claim: IdempotencyClaim;
  status: number;
  /** Fields of the answer shown only once, never kept (a new API key's secret). */
  shownOnce?: readonly string[];
  recorded: boolean;
}

const held = new AsyncLocalStorage<HeldKey | undefined>();

/** Run a route's implementation with the key its request holds (none: its writes carry no answer). */
export const withHeldKey = <T>(key: HeldKey | undefined, fn: () => Promise<T>): Promise<T> => held.run(key, fn);

/** An answer as its Idempotency-Key keeps it: without the fields shown only once (a new key's secret is never stored). */
export function withoutShownOnce(body: string, fields: readonly string[] | undefined): string {
  if (!fields?.length) return body;
  const parsed = JSON.parse(body) as Record<string, unknown>;
  for (const f of fields) delete parsed[f];
  return JSON.stringify(parsed);
}

const packAnswer = (body: string): Uint8Array | undefined => {
  const packed = gzipSync(body);
  return packed.length <= MAX_STORED_BODY ? packed : undefined;
};

/**
 * The write that records a create's answer in the create's own transaction
 * (docs/decisions.md "Ambiguous writes"): none when the request holds no
 * Idempotency-Key. Once the create commits, its key holds the answer even if
 * the request then fails (a timeout after the commit, a 503), so the client's
 * retry with the key gets that answer instead of a second create; and a create
 * whose request gave the key up (a 503, released) can no longer commit.
 */
export function answerWrites(answer: unknown): TxWrite[] {
  const key = held.getStore();
  if (!key) return [];
  key.recorded = true;
  const { accountId, keyHash, fingerprint, startedAt } = key.claim;
  return [repo.answerWrite(accountId, keyHash, fingerprint, startedAt, key.status, packAnswer(withoutShownOnce(JSON.stringify(answer), key.shownOnce)))];
}

/** A create's option: the request's answer for what it makes, built before the commit so that it commits with it. */
export interface CreateAnswer<T> {
  /** With an Idempotency-Key held, this answer commits in the create's own transaction (answerWrites). */
  answer?: (created: T) => unknown;
}

/** The key's answer write for what a create makes: none without `answer`, or when the request holds no key. */
export const createAnswerWrites = <T>(opts: CreateAnswer<T>, created: T): TxWrite[] => (opts.answer ? answerWrites(opts.answer(created)) : []);

/** Whether an error is the create's key no longer being its own (not a conflict to retry). */
export const isKeyNotHeld = (err: unknown): boolean => err instanceof repo.KeyNotHeldError;

/** retryOnConflict's test for a create that carries its answer: a lost race is retried, a key no longer held is not. */
export const isRetryableConflict = (err: unknown): boolean => err instanceof ConflictError && !isKeyNotHeld(err);

export type IdempotencyStart = { claim: IdempotencyClaim } | { replay: { status: number; body: string } };

/** JSON with object keys sorted, so the same body sent with another key order is the same request. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Start a create that carries an Idempotency-Key: claim the key, or answer the
 * first answer again, or refuse a different request under the same key (422)
 * or a repeat while the first is still running (409).
 */
export async function beginIdempotent(
  accountId: string,
  key: string,
  request: { method: string; resource: string; pathParameters: unknown; body: unknown },
  now = Date.now(),
): Promise<IdempotencyStart> {
  if (!KEY_FORMAT.test(key)) {
    throw new BadRequestError(`${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters`, [{ field: IDEMPOTENCY_HEADER, message: '1-255 printable ASCII characters' }]);
  }
  const claim: IdempotencyClaim = {
    accountId,
    keyHash: sha256(key),
    fingerprint: sha256(`${request.method} ${request.resource} ${canonical(request.pathParameters ?? {})} ${canonical(request.body ?? null)}`),
    startedAt: now,
  };
  // Two rounds at most: the record can expire between a failed claim and the read.
  for (let round = 0; round < 2; round++) {
    if (await claimOrGiveBack(claim, now)) return { claim };
    const existing = await repo.getKey(accountId, claim.keyHash, now);
    if (!existing) continue;
    if (existing.fingerprint !== claim.fingerprint) {
      throw new ValidationError(`This ${IDEMPOTENCY_HEADER} was already used with a different request`, [
        { field: IDEMPOTENCY_HEADER, message: 'already used with a different request body or endpoint' },
      ]);
    }
    if (existing.state === 'running') throw new ConflictError(`A request with this ${IDEMPOTENCY_HEADER} is still in progress; retry shortly`);
    if (!existing.body) throw new ConflictError(`A request with this ${IDEMPOTENCY_HEADER} already succeeded; its answer is too large to replay`);
    return { replay: { status: existing.status ?? 200, body: gunzipSync(existing.body).toString('utf8') } };
  }
  throw new ConflictError(`A request with this ${IDEMPOTENCY_HEADER} is still in progress; retry shortly`);
}

/**
 * Claim the key. A claim that failed without an answer (the store timed out,
 * then refused the SDK's retries) may have been written: it is given back (only
 * this claim, by its `startedAt`), or the key would answer the client's retries
 * 409 until the lock went stale.
 */
async function claimOrGiveBack(claim: IdempotencyClaim, now: number): Promise<boolean> {
  try {
    return await repo.claimKey(claim.accountId, claim.keyHash, claim.fingerprint, now, TTL_SECONDS, STALE_LOCK_MS);
  } catch (err) {
    await releaseIdempotent(claim);
    throw err;
  }
}

/**
 * Tries of recording or releasing a key, beyond the SDK's own retries: both
 * are safe to repeat (conditioned on the claim's fingerprint), and a key left
 * running answers the client's retries 409 until the lock goes stale (two
 * minutes) and lets a retry of a create that did commit run again.
 */
const KEY_WRITE_TRIES = 4;

async function keyWrite(what: string, write: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (attempt >= KEY_WRITE_TRIES) return logger.error(`idempotency: could not ${what}`, { err });
      await sleep(50 * 2 ** attempt * (0.5 + Math.random() / 2));
    }
  }
}

/** Keep a successful answer for replays. The write already happened, so a failure here is logged, not answered. */
export async function completeIdempotent(claim: IdempotencyClaim, status: number, body: string): Promise<void> {
  const packed = packAnswer(body);
  await keyWrite('record the answer', () => repo.completeKey(claim.accountId, claim.keyHash, claim.fingerprint, status, packed));
}

/** A failed request gives its key back, so the client's retry runs afresh. */
export async function releaseIdempotent(claim: IdempotencyClaim): Promise<void> {
  await keyWrite('release the key', () => repo.releaseKey(claim.accountId, claim.keyHash, claim.fingerprint, claim.startedAt));
}
