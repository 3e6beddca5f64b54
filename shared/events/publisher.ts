import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Condition } from '../db/entity.ts';
import { batchDelete, type Key } from '../db/query.ts';
import { writeNow } from '../db/transact.ts';
import { logger } from '../logger.ts';
import { recordMetric } from '../observability.ts';
import type { BusEntry, EventBusPort } from './bus.ts';
import { boundDetail, entrySize, MAX_ENTRY_BYTES } from './entry-size.ts';
import { METRICS } from '../metrics.ts';
import { loadItems, queuePage } from './outbox-queue.ts';
import { outboxItems, type OutboxItem, type OutboxRecord } from './outbox.ts';
import { escapeForTransport } from './transport.ts';

/** PutEvents takes at most 10 entries per call, and at most 256 KB in all. */
const PUT_BATCH = 10;
/** Tries of a transiently refused entry inside one invocation; after that the sweeper retries it. */
const PUT_ATTEMPTS = 3;
/** PutEvents calls in flight at once: the bus takes them in parallel, and one slow call holds up no other batch. */
const PUT_CONCURRENCY = 4;

/**
 * Entry error codes that retrying cannot cure: the bus refuses the entry
 * itself (malformed, too large, invalid). Anything else (throttling, internal
 * errors, permissions being fixed) is transient and retried.
 */
const PERMANENT_ENTRY_ERRORS = new Set(['MalformedDetail', 'InvalidArgument', 'ValidationException', 'InvalidEventPatternException']);

/** The bus entry of a record; characters some transport refuses travel JSON-escaped (same payload once parsed). */
export const toBusEntry = (r: OutboxRecord): BusEntry => ({ source: r.source, detailType: r.detailType, detail: escapeForTransport(JSON.stringify(r.detail)), time: new Date(r.createdAt) });

/** What became of one record in a publish. */
type Fate = { state: 'published' } | { state: 'parked'; reason: string } | { state: 'pending'; reason: string };

/** Split records into PutEvents calls: at most 10 entries and 256 KB each, as EventBridge counts them. */
function sizedBatches(records: OutboxRecord[]): OutboxRecord[][] {
  const batches: OutboxRecord[][] = [];
  let current: OutboxRecord[] = [];
  let bytes = 0;
  for (const r of records) {
    const size = entrySize(toBusEntry(r));
    if (current.length && (current.length === PUT_BATCH || bytes + size > MAX_ENTRY_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(r);
    bytes += size;
  }
  if (current.length) batches.push(current);
  return batches;
}

/**
 * Put one batch, resending only transiently rejected entries with jittered
 * backoff. An entry the bus refuses for good is not retried (it will be
 * parked); a call refused as a whole for its content is split so each entry
 * gets its own verdict.
 */
async function putBatch(bus: EventBusPort, batch: OutboxRecord[], fates: Map<OutboxRecord, Fate>): Promise<void> {
  let pending = batch;
  for (let attempt = 1; pending.length; attempt++) {
    const retry: OutboxRecord[] = [];
    try {
      const out = await bus.putEvents(pending.map(toBusEntry));
      pending.forEach((r, i) => {
        const res = out.entries[i];
        if (!res?.errorCode) fates.set(r, { state: 'published' });
        else if (PERMANENT_ENTRY_ERRORS.has(res.errorCode)) fates.set(r, { state: 'parked', reason: `${res.errorCode}: ${res.errorMessage ?? ''}`.trim() });
        else {
          fates.set(r, { state: 'pending', reason: `${res.errorCode}: ${res.errorMessage ?? ''}`.trim() });
          retry.push(r);
        }
      });
    } catch (err) {
      const e = err as Error;
      if (e.name === 'ValidationException') {
        // The request as a whole was refused for what it carries: alone, each entry is judged on its own.
        if (pending.length > 1) {
          await Promise.all(pending.map((r) => putBatch(bus, [r], fates)));
          return;
        }
        fates.set(pending[0], { state: 'parked', reason: `ValidationException: ${e.message}` });
        return;
      }
      // Throttled, network, bus unreachable: every entry is still pending.
      logger.warn('outbox: PutEvents failed', { attempt, err });
      for (const r of pending) fates.set(r, { state: 'pending', reason: e.message || e.name });
      retry.push(...pending);
    }
    if (!retry.length || attempt >= PUT_ATTEMPTS) return;
    await sleep(50 * 2 ** attempt * (0.5 + Math.random() / 2));
    pending = retry;
  }
}

/**
 * Remove published outbox items: 10 keys per BatchWriteItem, the calls side
 * by side. The keys are the outbox entity's, so nothing but outbox items can
 * be addressed; an item already removed (by the sweeper or a concurrent
 * retry) is fine. What a delete leaves, the sweeper republishes (at least
 * once, never lost).
 */
const deletePublished = (records: OutboxRecord[]): Promise<void> =>
  batchDelete(
    records.map((r) => outboxItems.key(r)),
    { perCall: 10, concurrency: 10 },
  );

/** The item is (still) an outbox item: a write never creates one from a key alone. */
const isOutboxItem: Condition = { expr: '#type = :outbox', names: { '#type': 'type' }, values: { ':outbox': 'outbox' } };

/**
 * Park an outbox item the bus refused for good (decisions §7): it leaves the
 * pending shards (so neither the stream nor the sweeper tries it again), is
 * listed under the parked partition with the reason, and is counted in the
 * metric the OutboxParked alarm watches. It is never deleted.
 */
async function park(r: OutboxRecord, reason: string, now = new Date()): Promise<void> {
  // Moving to PARKED takes the item off its pending shard (the index follows the state).
  const parked: OutboxItem = { ...r, state: 'parked', parkedAt: now.toISOString(), parkReason: reason.slice(0, 1000) };
  try {
    await writeNow(outboxItems.update(r, parked, isOutboxItem));
  } catch (err) {
    // Published and removed meanwhile by another path: nothing to park.
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
    return;
  }
  recordMetric(METRICS.outboxParked, 1);
  logger.error('outbox: event refused by the bus for good; parked', { accountId: r.accountId, eventId: r.eventId, event: r.detailType, reason });
}

/** Run `work` over items with at most `limit` in flight. */
async function withConcurrency<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]);
    }),
  );
}

/**
 * Deletes the stream path left running behind it in this container (see
 * publishStreamBatch), each settled (a failure is logged, never thrown).
 */
const behind = new Set<Promise<void>>();
/** Published items whose deletes may run behind at once; past this, a batch waits for the oldest round, so a long burst cannot pile them up. */
const MAX_BEHIND_ITEMS = 1_000;
let itemsBehind = 0;
/** Where the local runtime finds what a function still has running before it stops the worker (local/lambda/worker.mjs). */
const DRAIN_HOOK = Symbol.for('support-desk.drain');

/** Keys of published items the stream path has handed over for deletion, each with its round's settle. */
const toDelete: { key: Key; settle: (err?: unknown) => void }[] = [];
/** BatchWriteItem calls of the stream path in flight at once: fewer than a lane's rounds, so keys gather while the store is slow. */
const DELETE_CALLS = 4;
let deleteCalls = 0;

/**
 * Send what waits in `toDelete`: while a call is free, one call takes up to
 * 25 keys, whichever rounds they came from. On an idle store a round's keys
 * go at once; while the store is slow, the keys of the batches published
 * meanwhile gather and go in full calls, so a lane that returns sooner (and
 * so hands over smaller batches) does not make more delete calls.
 */
function sendDeletes(): void {
  while (deleteCalls < DELETE_CALLS && toDelete.length) {
    const taken = toDelete.splice(0, 25);
    deleteCalls++;
    batchDelete(
      taken.map((t) => t.key),
      { perCall: 25 },
    )
      .then(
        () => taken.forEach((t) => t.settle()),
        (err) => taken.forEach((t) => t.settle(err)),
      )
      .finally(() => {
        deleteCalls--;
        sendDeletes();
      });
  }
}

/** Delete published items through the shared calls above: resolves once each of them is deleted. */
function deleteGathered(records: OutboxRecord[]): Promise<void> {
  const done = Promise.all(records.map((r) => new Promise<void>((resolve, reject) => toDelete.push({ key: outboxItems.key(r), settle: (err) => (err === undefined ? resolve() : reject(err)) })))).then(
    () => undefined,
  );
  sendDeletes();
  return done;
}

async function leaveBehind(records: OutboxRecord[]): Promise<void> {
  if (!records.length) return;
  itemsBehind += records.length;
  const settled: Promise<void> = deleteGathered(records)
    .catch((err) => logger.warn('outbox: removing published items failed; the sweeper republishes them and receivers deduplicate by event id', { err }))
    .finally(() => {
      itemsBehind -= records.length;
      behind.delete(settled);
    });
  behind.add(settled);
  const hooks = ((globalThis as { [DRAIN_HOOK]?: Set<() => Promise<unknown>> })[DRAIN_HOOK] ??= new Set());
  hooks.add(outboxDeletesBehind);
  while (itemsBehind > MAX_BEHIND_ITEMS) await behind.values().next().value;
}

/** Every outbox delete left running behind so far has settled (the local runtime waits for it before a clean stop). */
export const outboxDeletesBehind = async (): Promise<void> => {
  while (behind.size) await Promise.all(behind);
};

export interface PublishResult {
  published: OutboxRecord[];
  parked: OutboxRecord[];
  /** Transiently refused: still pending in the outbox; the sweeper retries them. */
  unpublished: OutboxRecord[];
}

/**
 * Publish outbox records: size-bounded PutEvents calls in parallel; published
 * items are deleted, items the bus refuses for good are parked, transiently
 * refused ones stay pending for the sweeper. No record ever waits on another:
 * there is no first failure to stop at. Delivery is at least once; consumers
 * deduplicate by event id. With `deleteBehind`, the deletes are started, not
 * waited for (publishStreamBatch says why).
 */
export async function publishRecords(bus: EventBusPort, records: OutboxRecord[], opts: { deleteBehind?: boolean } = {}): Promise<PublishResult> {
  const fates = new Map<OutboxRecord, Fate>();
  await withConcurrency(sizedBatches(records), PUT_CONCURRENCY, (batch) => putBatch(bus, batch, fates));
  const result: PublishResult = { published: [], parked: [], unpublished: [] };
  for (const r of records) {
    const fate = fates.get(r) ?? { state: 'pending', reason: 'not attempted' };
    if (fate.state === 'published') result.published.push(r);
    else if (fate.state === 'parked') result.parked.push(r);
    else result.unpublished.push(r);
  }
  await Promise.all([opts.deleteBehind ? leaveBehind(result.published) : deletePublished(result.published), ...result.parked.map((r) => park(r, (fates.get(r) as { reason: string }).reason))]);
  // Counted here, so the stream path and the sweeper (and a republish) report alike.
  if (result.published.length) recordMetric(METRICS.outboxPublished, result.published.length);
  if (result.unpublished.length) logger.warn('outbox: events not accepted yet; the sweeper retries them', { eventIds: result.unpublished.map((r) => r.eventId) });
  return result;
}

/** Only the fields of an outbox item that make up the record (keys and index attributes dropped). */
export function outboxRecordOf(item: object): OutboxRecord {
  const { eventId, accountId, source, detailType, detail, createdAt } = item as OutboxRecord;
  return { eventId, accountId, source, detailType, detail, createdAt };
}

/** A parked outbox item as operators see it. */
export interface ParkedEvent extends OutboxRecord {
  parkedAt: string;
  parkReason: string;
}

/** Parked outbox items, oldest first (the admin CLI lists them; decisions §7). */
export async function listParkedEvents(limit = 100): Promise<ParkedEvent[]> {
  const page = await queuePage('PARKED', Math.min(1000, Math.max(1, limit)));
  return (await loadItems(page.items)).filter((i) => i.state === 'parked').map((i) => ({ ...outboxRecordOf(i), parkedAt: i.parkedAt!, parkReason: i.parkReason! }));
}

/**
 * Republish a parked event after its cause was fixed: it goes back on the
 * pending list (so a crash now still ends in a publish), bounded again by the
 * current rules, and is published at once. Returns what became of it.
 */
export async function republishParkedEvent(bus: EventBusPort, accountId: string, eventId: string): Promise<'published' | 'parked' | 'pending' | 'not-found'> {
  const stored = await outboxItems.get({ accountId, eventId }, { consistent: true });
  if (!stored) return 'not-found';
  const record: OutboxRecord = { ...outboxRecordOf(stored), detail: boundDetail(stored.detail, stored.source) };
  // Back on its pending shard (the index follows the state), without the parking facts.
  await writeNow(outboxItems.update(stored, { ...record, state: undefined, parkedAt: undefined, parkReason: undefined }, isOutboxItem));
  const result = await publishRecords(bus, [record]);
  return result.published.length ? 'published' : result.parked.length ? 'parked' : 'pending';
}

/** A stream record that carries a new outbox item, with its sequence number. */
export interface OutboxStreamRecord {
  sequenceNumber: string;
  record: OutboxRecord;
}

/** The new outbox items of a stream batch, in stream order; every other change to the table is ignored. */
export function outboxStreamRecords(event: DynamoDBStreamEvent): OutboxStreamRecord[] {
  const out: OutboxStreamRecord[] = [];
  for (const r of event.Records ?? []) {
    if (r.eventName !== 'INSERT' || !r.dynamodb?.NewImage) continue;
    // Check the kind before decoding: other items (e.g. a group with an empty member map, which the stream
    // hands over as an empty attribute value) must not stop the publisher, as the Lambda event filter ensures in AWS.
    if ((r.dynamodb.NewImage as Record<string, AttributeValue>).type?.S !== 'outbox') continue;
    const item = unmarshall(r.dynamodb.NewImage as Record<string, AttributeValue>);
    out.push({ sequenceNumber: r.dynamodb.SequenceNumber!, record: outboxRecordOf(item) });
  }
  return out;
}

/**
 * The stream handler's work: publish the batch's outbox items. It never
 * reports a record back to the stream: a shard retried from a failed record
 * would hold every later event (of every tenant) behind it. Refused-for-good
 * items are parked; transiently refused ones stay pending and the sweeper
 * retries them. Only a crash of the handler itself makes Lambda retry the
 * batch, bounded by the mapping's maxRecordAge (the sweeper covers the rest).
 *
 * It returns once the batch is on the bus, with its outbox deletes still
 * running: a stream lane hands over an account's next batch only when this
 * invocation returns, and under load a delete took longer than the publish it
 * follows (docs/performance.md, issue 30). The order of an account's events
 * is the order of their PutEvents, which stays one batch after another. A
 * delete left behind finishes in this container while it runs, or when Lambda
 * thaws it for the next batch; one that never finishes (the container
 * retired, the delete failed) leaves its item to the sweeper, which
 * republishes it after OUTBOX_SWEEP_AGE_SECONDS under the same event id,
 * which every receiver deduplicates (docs/decisions.md, "Outbox deletes behind the publish").
 */
export async function publishStreamBatch(bus: EventBusPort, event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const items = outboxStreamRecords(event);
  if (items.length)
    await publishRecords(
      bus,
      items.map((i) => i.record),
      { deleteBehind: true },
    );
  return { batchItemFailures: [] };
}
