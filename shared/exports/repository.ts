import { bindEntity } from '../db/entity.ts';
import { historyEntities } from '../db/entities/history.ts';
import { shardedPage } from '../db/query.ts';
import { HISTORY_SHARDS, historyShard } from '../db/shard.ts';
import { indexKeys, TTL_ATTRIBUTE } from '../db/table-definition.ts';
import type { TxWrite } from '../db/transact.ts';

/** The exported kinds as their change index names them. */
export const KIND_KEYS = { ticket: 'TICKET', contact: 'CONTACT', organization: 'ORGANIZATION', user: 'USER' } as const;
export type ExportKind = keyof typeof KIND_KEYS;

/** decisions §15: a delete stays visible to a resuming sync for 30 days. */
export const TOMBSTONE_DAYS = 30;

interface TombstoneRecord {
  accountId: string;
  kind: string;
  id: string;
  /** When the record was deleted: its place in the change index. */
  updatedAt: string;
  expiresAt: number;
}

const tombstones = bindEntity<TombstoneRecord>(historyEntities.tombstone, {
  fields: ['id', 'accountId', 'kind', 'updatedAt', 'expiresAt'],
  renames: { expiresAt: TTL_ATTRIBUTE },
  keyValues: (t) => ({ changeShard: historyShard(t.id) }),
});

/** The tombstone of a deleted record, for the delete's transaction. */
export function tombstonePut(kind: ExportKind, accountId: string, id: string, at: string): TxWrite {
  const expiresAt = Math.floor(Date.parse(at) / 1000) + TOMBSTONE_DAYS * 86_400;
  // Unconditional: ids are never reused, and a repeat of the same delete writes the same fact.
  return tombstones.put({ accountId, kind: KIND_KEYS[kind], id, updatedAt: at, expiresAt }, undefined);
}

export const isTombstone = (item: Record<string, unknown>) => item.type === 'tombstone';

/**
 * A page of a kind's change index (records and tombstones, whole items) in
 * `updatedAt#id` order within [lo, hi]: the 8 write shards merged, each read
 * for about twice its share of the page.
 */
export async function changePage(accountId: string, kind: ExportKind, lo: string, hi: string, limit: number): Promise<{ items: Record<string, unknown>[]; resumeAfter?: string; more: boolean }> {
  const perShard = Math.min(limit + 1, Math.ceil((2 * limit) / HISTORY_SHARDS) + 1);
  const queries = Array.from({ length: HISTORY_SHARDS }, (_, shard) => tombstones.query('changes', { accountId, kind: KIND_KEYS[kind], changeShard: String(shard) }, { skBetween: [lo, hi] }));
  const sortKey = indexKeys('gsi4').sortKey;
  const page = await shardedPage<Record<string, unknown>>(queries, sortKey, limit, perShard);
  // Where the next page starts: after the shards' stop, or after the last entry answered.
  const resumeAfter = page.next ?? (page.items.length ? String(page.items[page.items.length - 1][sortKey]) : undefined);
  return { items: page.items, resumeAfter, more: page.next !== undefined };
}
