/**
 * A stable spread of ids over `shards` partitions (32-bit FNV-1a): the write
 * shard of an index whose sort key follows time, so one busy account's writes
 * land on several partitions instead of the newest end of one (the outbox's
 * pending queue, the change index, the audit log).
 */
export function shardOf(id: string, shards: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % shards;
}

/**
 * Partitions of the change index (incremental export) and of the account's
 * audit log. 8 spread one account's busiest writes over 8 index partitions,
 * about 8,000 write units a second (docs/history.md "How fast one account may
 * change"); a page reads the 8 in parallel and merges them.
 */
export const HISTORY_SHARDS = 8;

/** The history shard of a record or audit, by its id. */
export const historyShard = (id: string): string => String(shardOf(id, HISTORY_SHARDS));
