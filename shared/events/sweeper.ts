import { setTimeout as sleep } from 'node:timers/promises';
import type { Key } from '../db/query.ts';
import { OUTBOX_INDEX, OUTBOX_SHARDS } from '../db/table-definition.ts';
import { logger } from '../logger.ts';
import type { EventBusPort } from './bus.ts';
import type { OutboxRecord } from './outbox.ts';
import { loadItems, queuePage } from './outbox-queue.ts';
import { outboxRecordOf, publishRecords } from './publisher.ts';

export interface SweepOptions {
  olderThanSeconds: number;
  now?: Date;
  /** Local pipelines sharing a table (tests) sweep only their own items. */
  filter?: (r: OutboxRecord) => boolean;
  /** Stop taking new pages after this long (the sweeper's function timeout is 60 s); the next run continues. */
  budgetMs?: number;
}

/**
 * Publish every pending outbox item older than `olderThanSeconds`, shard by
 * shard, oldest first. The stream publishes items within a second; what is
 * still here was missed (a crash between the write and PutEvents, a stream
 * record that expired, a transient refusal). Parked items are not on this
 * list, and a failure never stops the sweep: each item gets its own verdict.
 */
export async function sweepOutbox(bus: EventBusPort, opts: SweepOptions): Promise<{ published: number; parked: number; unpublished: number }> {
  const cutoff = new Date((opts.now ?? new Date()).getTime() - opts.olderThanSeconds * 1000).toISOString();
  const deadline = Date.now() + (opts.budgetMs ?? 40_000);
  const totals = { published: 0, parked: 0, unpublished: 0 };
  let failedShards = 0;
  await Promise.all(
    Array.from({ length: OUTBOX_SHARDS }, async (_, shard) => {
      let startKey: Key | undefined;
      try {
        do {
          // A page the store fails to read or update (throttled past the SDK's retries) is tried again here: its
          // items stay pending either way, but a sweep that gave up on the first failure would leave every later
          // page, and every other shard, to the next run.
          const page = await pageAgain(async () => {
            // createdAt#eventId sorts by time; '#' < any digit keeps items of the cutoff millisecond out.
            const found = await queuePage(`PENDING#${shard}`, 100, { before: `${cutoff}#`, startKey });
            return { found, items: await loadItems(found.items) };
          });
          const records = page.items
            .filter((i) => i.state !== 'parked')
            .map(outboxRecordOf)
            .filter((r) => !opts.filter || opts.filter(r));
          const result = await pageAgain(() => publishRecords(bus, records));
          totals.published += result.published.length;
          totals.parked += result.parked.length;
          totals.unpublished += result.unpublished.length;
          startKey = page.found.nextKey;
        } while (startKey && Date.now() < deadline);
      } catch (err) {
        // This shard's rest waits for the next run (a minute later); the other shards are swept now.
        failedShards++;
        logger.warn('outbox sweep: a shard failed; the next run continues it', { shard, err });
      }
    }),
  );
  if (totals.published || totals.parked || totals.unpublished || failedShards) logger.info('outbox sweep', { ...totals, failedShards });
  return totals;
}

/** Tries of one page of the sweep: the SDK has already retried each call, so these are for a store that stays busy a while. */
const PAGE_TRIES = 4;

async function pageAgain<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (attempt >= PAGE_TRIES) throw err;
      await sleep(100 * 2 ** attempt * (0.5 + Math.random() / 2));
    }
  }
}

/** Age of the oldest pending outbox item in seconds (0 when none): the metric behind the outbox-age alarm. */
export async function oldestPendingAgeSeconds(now = new Date()): Promise<number> {
  const heads = await Promise.all(
    Array.from({ length: OUTBOX_SHARDS }, async (_, shard) => {
      const head = (await queuePage(`PENDING#${shard}`, 1)).items[0];
      const sk = head?.[OUTBOX_INDEX.sortKey] as string | undefined;
      return sk ? Date.parse(sk.split('#')[0]) : Number.POSITIVE_INFINITY;
    }),
  );
  const oldest = Math.min(...heads);
  return Number.isFinite(oldest) ? Math.max(0, Math.round((now.getTime() - oldest) / 1000)) : 0;
}
