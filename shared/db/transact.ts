import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, TransactWriteCommand, UpdateCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { setTimeout as sleep } from 'node:timers/promises';
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, DomainError, ServiceUnavailableError, ValidationError } from '../domain/errors.ts';
import { logger } from '../logger.ts';
import { ddb, StaleStampError, STAMP_MAX_AGE_MS, withStamp } from './client.ts';
import { storeLimitError } from './store-errors.ts';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** One write of a transaction, and the domain error its failed condition means. */
export interface TxWrite {
  item: TransactItem;
  onConditionFailed?: () => Error;
  /** The change-index stamp (`updatedAt`, epoch ms) the item is written under, when it moves in that index (client.ts STAMP_MAX_AGE_MS). */
  stampedAt?: number;
  /** The same write placed at a later instant of the change index (its `updatedAt` attribute unchanged), for a write sent late. */
  restamp?: (at: string) => TxWrite;
  /** After a commit that may have come late: the update that moves the item's entry in the change index to `at` (if still where this write put it). */
  move?: (at: string) => TransactItem;
}

/**
 * Writes whose change-index stamp is older than STAMP_MAX_AGE_MS move to now
 * in that index before they are sent: a reader of the export may already have
 * passed their `updatedAt` (docs/history.md "Why the 10-second settle line
 * loses nothing"). The record's own `updatedAt` is unchanged.
 */
export function freshStamps(writes: readonly TxWrite[], now = Date.now()): TxWrite[] {
  const at = new Date(now).toISOString();
  return writes.map((w) => (w.stampedAt !== undefined && w.restamp && now - w.stampedAt > STAMP_MAX_AGE_MS ? w.restamp(at) : w));
}

/** The oldest stamp among writes, or undefined when none moves in the change index. */
const oldestStamp = (writes: readonly TxWrite[]): number | undefined => {
  let oldest: number | undefined;
  for (const w of writes) if (w.stampedAt !== undefined && (oldest === undefined || w.stampedAt < oldest)) oldest = w.stampedAt;
  return oldest;
};

const MAX_ATTEMPTS = 8;

/** DynamoDB's limit of items per transaction. */
export const MAX_TRANSACTION_ITEMS = 100;

/**
 * Run writes as one TransactWriteItems. A failed condition becomes the domain
 * error its write names; a TransactionConflict (another transaction holds one
 * of the items) is retried with jittered backoff, so contended writers settle
 * on condition checks rather than on luck.
 */
export async function transactWrite(writes: TxWrite[]): Promise<void> {
  // Limits the caller's input can reach are the caller's 422, never our 500.
  if (writes.length > MAX_TRANSACTION_ITEMS) throw new ValidationError('The request changes too many records at once', [{ field: 'body', message: 'too many related changes in one request' }]);
  for (let attempt = 1; ; attempt++) {
    const sent = freshStamps(writes);
    const stampedAt = oldestStamp(sent);
    try {
      const out = await withStamp(stampedAt, () => ddb.send(new TransactWriteCommand({ TransactItems: sent.map((w) => w.item) })));
      // The SDK sent it again, unchanged (client.ts): if that was late, the commit may be too.
      if ((out.$metadata.attempts ?? 1) > 1 && stampedAt !== undefined && Date.now() - stampedAt > STAMP_MAX_AGE_MS) await moveStamps(sent);
      return;
    } catch (err) {
      // An attempt the SDK would have sent late (its own retries): stamped anew above, and sent again.
      if (err instanceof StaleStampError && attempt < MAX_ATTEMPTS) continue;
      const limit = storeLimitError(err);
      if (limit) throw limit;
      if (!(err instanceof TransactionCanceledException)) throw err;
      const reasons = err.CancellationReasons ?? [];
      const failed = reasons.findIndex((r) => r.Code === 'ConditionalCheckFailed');
      if (failed >= 0) {
        throw writes[failed]?.onConditionFailed?.() ?? new ConflictError('The resource was changed concurrently; retry the request', { cause: err });
      }
      const conflict = reasons.some((r) => r.Code === 'TransactionConflict');
      if (!conflict || attempt >= MAX_ATTEMPTS) {
        throw conflict ? new ConflictError('The resource is busy; retry the request', { cause: err }) : err;
      }
      await sleep(Math.random() * 20 * 2 ** attempt);
    }
  }
}

/**
 * A transaction retried under its ClientRequestToken committed at its first
 * attempt or at a later one, which may have gone out past STAMP_MAX_AGE_MS:
 * its items' entries in the change index move to now, so an export reader that
 * has passed their place still sees them (docs/history.md). An entry a later
 * write has moved already stays where it is.
 */
async function moveStamps(sent: readonly TxWrite[]): Promise<void> {
  const at = new Date().toISOString();
  await Promise.all(
    sent.flatMap((w) =>
      w.move
        ? [
            // Committed already: a move that fails is logged, never the request's failure.
            writeNow({ item: w.move(at) }).catch((err: unknown) => {
              if ((err as Error).name !== 'ConditionalCheckFailedException') logger.error('transact: could not move a late commit in the change index', { err });
            }),
          ]
        : [],
    ),
  );
}

/**
 * Whether a write that failed may have been applied nonetheless: a store that
 * answered no (a cancellation, a 4xx) or a call refused before anything was
 * sent did not apply it; an attempt that went out and got no answer (a
 * timeout, a dropped connection, a 5xx), or any failure after an earlier
 * attempt went out, may have. What a failed request cleans up (copies of
 * attachments) stays when it may have committed (docs/decisions.md "Ambiguous writes").
 */
export function mayHaveCommitted(err: unknown): boolean {
  if (err instanceof TransactionCanceledException) return false;
  const meta = (err as { $metadata?: { attempts?: number; httpStatusCode?: number } }).$metadata;
  // No metadata: refused before the SDK sent it (a domain rule, the request's deadline at the start).
  if (!meta) return false;
  if ((meta.attempts ?? 1) > 1) return true;
  // The first attempt: our own refusal to send it (the deadline), or the store's answer.
  if (err instanceof ServiceUnavailableError || err instanceof DomainError) return false;
  return meta.httpStatusCode === undefined || meta.httpStatusCode >= 500;
}

/** Whether the SDK had sent the call before the attempt that failed (its retries: an earlier attempt may have applied it). */
const sentBefore = (err: unknown): boolean => ((err as { $metadata?: { attempts?: number } }).$metadata?.attempts ?? 1) > 1;

/** Whether the item stored under a put's key is that put's item, as an earlier, unanswered attempt of it would have left it. */
async function storedAsPut(put: NonNullable<TransactItem['Put']>): Promise<boolean> {
  const item = put.Item as Record<string, unknown>;
  const out = await ddb.send(new GetCommand({ TableName: put.TableName, Key: { pk: item.pk, sk: item.sk }, ConsistentRead: true }));
  return out.Item !== undefined && isDeepStrictEqual(out.Item, Object.fromEntries(Object.entries(item).filter(([, v]) => v !== undefined)));
}

/**
 * One write run on its own: a plain PutItem, UpdateItem or DeleteItem (half
 * the write cost of a one-item transaction). A failed condition becomes the
 * write's domain error. With `returnItem`, an update answers the item as it
 * now is (otherwise nothing comes back over the wire).
 */
export async function writeNow(w: TxWrite, opts: { returnItem?: boolean } = {}): Promise<Record<string, unknown> | undefined> {
  for (let attempt = 1; ; attempt++) {
    // Stamped anew when late, like a transaction's attempts (freshStamps).
    const [s] = freshStamps([w]);
    try {
      if (s.item.Put) await withStamp(s.stampedAt, () => ddb.send(new PutCommand(s.item.Put!)));
      else if (s.item.Delete) await ddb.send(new DeleteCommand(s.item.Delete));
      else if (s.item.Update) return (await withStamp(s.stampedAt, () => ddb.send(new UpdateCommand({ ...s.item.Update!, ...(opts.returnItem ? { ReturnValues: 'ALL_NEW' } : {}) })))).Attributes;
      else throw new Error('writeNow runs a Put, Update or Delete');
      return undefined;
    } catch (err) {
      if (err instanceof StaleStampError && attempt < MAX_ATTEMPTS) continue;
      const limit = storeLimitError(err);
      if (limit) throw limit;
      if ((err as Error).name === 'ConditionalCheckFailedException') {
        // An earlier attempt of this call may have applied the put with no answer (a timeout): its own item is no conflict.
        if (s.item.Put && sentBefore(err) && (await storedAsPut(s.item.Put))) return undefined;
        if (w.onConditionFailed) throw w.onConditionFailed();
      }
      throw err;
    }
  }
}
