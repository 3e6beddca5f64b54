import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { logger } from '../logger.ts';
import type { BusEntry, EventBusPort } from './bus.ts';
import type { OutboxRecord } from './outbox.ts';

/** PutEvents takes at most 10 entries per call. */
const PUT_BATCH = 10;
/** Tries per batch inside one invocation (~6 s of backoff) before the stream or the next sweep takes over. */
const PUT_ATTEMPTS = 6;

export const toBusEntry = (r: OutboxRecord): BusEntry => ({ source: r.source, detailType: r.detailType, detail: JSON.stringify(r.detail), time: new Date(r.createdAt) });

/**
 * Put one batch of <= 10 records, resending only the rejected entries with
 * jittered backoff until all are accepted or the attempts run out.
 * Returns the records still not accepted.
 */
async function putBatch(bus: EventBusPort, batch: OutboxRecord[]): Promise<OutboxRecord[]> {
  let pending = batch;
  for (let attempt = 1; pending.length; attempt++) {
    let failed: OutboxRecord[];
    try {
      const out = await bus.putEvents(pending.map(toBusEntry));
      failed = out.failedEntryCount ? pending.filter((_, i) => out.entries[i]?.errorCode) : [];
    } catch (err) {
      // The whole call failed (throttled, network): every entry is still pending.
      logger.warn('outbox: PutEvents failed', { attempt, err });
      failed = pending;
    }
    if (failed.length && attempt < PUT_ATTEMPTS) {
      logger.warn('outbox: entries rejected, retrying', { attempt, eventIds: failed.map((r) => r.eventId) });
      await sleep(Math.min(2000, 50 * 2 ** attempt) * (0.5 + Math.random() / 2));
    } else if (failed.length) return failed;
    pending = failed;
  }
  return [];
}

/**
 * Remove a published outbox item. The condition keeps a key mistake from ever
 * deleting anything but an outbox item; an item already removed (by the
 * sweeper or a concurrent retry) is fine.
 */
async function deletePublished(r: OutboxRecord): Promise<void> {
  try {
    await ddb.send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.outbox(r.accountId, r.eventId),
        ConditionExpression: '#type = :outbox',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':outbox': 'outbox' },
      }),
    );
  } catch (err) {
    if ((err as Error).name !== 'ConditionalCheckFailedException') throw err;
  }
}

/**
 * Publish outbox records in order, 10 per PutEvents, then delete what was
 * published. Stops at the first batch that cannot be published: the records
 * from the first unpublished one onwards are returned so the caller can have
 * them retried (a stream handler reports that record's sequence number).
 * Delivery is at least once; consumers deduplicate by event id.
 */
export async function publishRecords(bus: EventBusPort, records: OutboxRecord[]): Promise<{ published: OutboxRecord[]; unpublished: OutboxRecord[] }> {
  const published: OutboxRecord[] = [];
  for (let i = 0; i < records.length; i += PUT_BATCH) {
    const batch = records.slice(i, i + PUT_BATCH);
    const failed = new Set(await putBatch(bus, batch));
    const firstFailed = batch.findIndex((r) => failed.has(r));
    const ok = firstFailed < 0 ? batch : batch.slice(0, firstFailed);
    published.push(...ok);
    if (firstFailed >= 0) {
      // Entries after the first failure that did go out are published again on retry: at least once, never lost.
      await Promise.all(published.map(deletePublished));
      return { published, unpublished: records.slice(i + firstFailed) };
    }
  }
  await Promise.all(published.map(deletePublished));
  return { published, unpublished: [] };
}

/** Only the fields of an outbox item that make up the record (keys and index attributes dropped). */
export function outboxRecordOf(item: Record<string, unknown>): OutboxRecord {
  const { eventId, accountId, source, detailType, detail, createdAt } = item as unknown as OutboxRecord;
  return { eventId, accountId, source, detailType, detail, createdAt };
}

/**
 * Publish every outbox item older than `olderThanSeconds` (gsi4 OUTBOX_PENDING,
 * oldest first). The stream publishes items within a second; what is still
 * here after that was missed (a crash between the write and PutEvents, a
 * stream record that expired). Returns how many were published.
 */
export async function sweepOutbox(
  bus: EventBusPort,
  opts: { olderThanSeconds: number; now?: Date; /** Local pipelines sharing a table (tests) sweep only their own items. */ filter?: (r: OutboxRecord) => boolean },
): Promise<{ published: number; unpublished: number }> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.olderThanSeconds * 1000).toISOString();
  let published = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi4',
        // createdAt#eventId sorts by time; '#' < any digit keeps items of the cutoff millisecond out.
        KeyConditionExpression: 'gsi4pk = :p AND gsi4sk < :cutoff',
        ExpressionAttributeValues: { ':p': keys.outboxPending, ':cutoff': `${cutoff}#` },
        ExclusiveStartKey: startKey,
        Limit: 100,
      }),
    );
    const records = (out.Items ?? []).filter((i) => i.type === 'outbox').map(outboxRecordOf).filter((r) => !opts.filter || opts.filter(r));
    const result = await publishRecords(bus, records);
    published += result.published.length;
    if (result.unpublished.length) {
      logger.error('outbox sweep: events could not be published; next sweep retries', { eventIds: result.unpublished.map((r) => r.eventId) });
      return { published, unpublished: result.unpublished.length };
    }
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  if (published) logger.info('outbox sweep: published missed events', { published });
  return { published, unpublished: 0 };
}

/** Age of the oldest pending outbox item in seconds (0 when none): the metric behind the outbox-age alarm. */
export async function oldestPendingAgeSeconds(now = new Date()): Promise<number> {
  const out = await ddb.send(
    new QueryCommand({ TableName: tableName(), IndexName: 'gsi4', KeyConditionExpression: 'gsi4pk = :p', ExpressionAttributeValues: { ':p': keys.outboxPending }, Limit: 1 }),
  );
  const createdAt = out.Items?.[0]?.createdAt as string | undefined;
  return createdAt ? Math.max(0, Math.round((now.getTime() - Date.parse(createdAt)) / 1000)) : 0;
}

/** A stream record that carries a new outbox item, with its sequence number (the handle for batchItemFailures). */
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
 * The stream handler's work: publish the batch's outbox items; if some cannot
 * be published, report the first of them, so Lambda retries the stream from
 * there (and nothing after it is skipped).
 */
export async function publishStreamBatch(bus: EventBusPort, event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> {
  const items = outboxStreamRecords(event);
  if (!items.length) return { batchItemFailures: [] };
  const { unpublished } = await publishRecords(
    bus,
    items.map((i) => i.record),
  );
  if (!unpublished.length) return { batchItemFailures: [] };
  const first = items.find((i) => i.record === unpublished[0])!;
  logger.error('outbox: events not accepted by the bus; the stream retries them', { eventIds: unpublished.map((r) => r.eventId) });
  return { batchItemFailures: [{ itemIdentifier: first.sequenceNumber }] };
}
