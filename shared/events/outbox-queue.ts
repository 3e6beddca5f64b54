import { batchGet, queryPage, type Key } from '../db/query.ts';
import { outboxItems, type OutboxItem } from './outbox.ts';

/**
 * Reading the outbox index: its pending shards (the sweeper, the outbox-age
 * metric) and its parked list (the admin CLI).
 */

/** Full outbox items for entries of the outbox index (it projects keys only), in the index's order; items gone meanwhile are skipped. */
export async function loadItems(entries: Record<string, unknown>[]): Promise<OutboxItem[]> {
  const id = (k: Record<string, unknown>) => `${k.pk}|${k.sk}`;
  const found = new Map<string, Record<string, unknown>>();
  for (let i = 0; i < entries.length; i += 100) {
    const keys: Key[] = entries.slice(i, i + 100).map((k) => ({ pk: String(k.pk), sk: String(k.sk) }));
    for (const item of await batchGet(keys)) found.set(id(item), item);
  }
  return entries.flatMap((k) => {
    const item = found.get(id(k));
    return item ? [outboxItems.fromItem(item)] : [];
  });
}

/** A page of the outbox index: one queue (a pending shard, or the parked list), oldest first. */
export const queuePage = (queue: string, limit: number, opts: { before?: string; startKey?: Key } = {}) =>
  queryPage<Record<string, unknown>>({ ...outboxItems.query('queue', { queue }, { skBefore: opts.before }), limit, startKey: opts.startKey });
