import { bindEntity, conditions } from '../db/entity.ts';
import { historyEntities } from '../db/entities/history.ts';
import { shardedPage, queryPage } from '../db/query.ts';
import { HISTORY_SHARDS, historyShard } from '../db/shard.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import type { TxWrite } from '../db/transact.ts';
import type { AuditChange, AuditResourceType, AuditVia } from './model.ts';
import { auditSettings } from './settings.ts';

/** An audit as stored: flat, so its actor and resource can key the log's indexes. */
export interface AuditRecord {
  id: string;
  accountId: string;
  createdAt: string;
  resourceType: AuditResourceType;
  resourceId: string;
  actorType: 'user' | 'automation' | 'system' | 'email' | 'requester' | 'macro';
  actorId: string | null;
  via: AuditVia;
  changes: AuditChange[];
  messageId: string | null;
  deleted: boolean;
  /** Order within the resource: a ticket's version (zero-padded), so its audits list in commit order whatever the writers' clocks. */
  seq: string;
  expiresAt: number;
}

const audits = bindEntity<AuditRecord>(historyEntities.audit, {
  fields: ['id', 'accountId', 'createdAt', 'resourceType', 'resourceId', 'actorType', 'actorId', 'via', 'changes', 'messageId', 'deleted', 'seq', 'expiresAt'],
  renames: { expiresAt: TTL_ATTRIBUTE },
  keyValues: (a) => ({ shard: historyShard(a.id) }),
  normalize: (a) => ({ ...a, changes: a.changes ?? [], deleted: Boolean(a.deleted) }),
});

/** The audit's expiry (epoch seconds): the stage's retention from its creation. */
export const auditExpiry = (createdAt: string): number => Math.floor(Date.parse(createdAt) / 1000) + auditSettings().AUDIT_RETENTION_DAYS * 86_400;

/** The audit's write, for the transaction of the change it records. */
export const auditPut = (a: AuditRecord): TxWrite => audits.put(a, conditions.absent());

/** A sort-key range: `lo` and `hi` inclusive (BETWEEN). */
export interface SkRange {
  lo: string;
  hi: string;
}

/** A page of one resource's audits (its own partition), in `seq` order. */
export async function resourcePage(accountId: string, resourceType: string, resourceId: string, forward: boolean, limit: number, after?: string) {
  const range = after === undefined ? undefined : forward ? { skAfter: after } : { skBefore: after };
  const page = await queryPage<Record<string, unknown>>({ ...audits.query('byResource', { accountId, resourceType, resourceId }, { forward, ...range }), limit });
  const items = page.items.map(audits.fromItem);
  return { items, next: page.nextKey ? String(page.items[page.items.length - 1].sk) : undefined };
}

export interface LogFilter {
  resourceType?: string;
  actorId?: string;
}

/**
 * A page of the account's log in creation order: the shards of the narrowest
 * index the filter allows (actor, resource type, or every audit) merged by
 * `createdAt#id` within `range`; a resource type given beside an actor is a
 * filter on the actor's audits.
 */
export async function logPage(accountId: string, f: LogFilter, range: SkRange, limit: number) {
  const shards = Array.from({ length: HISTORY_SHARDS }, (_, i) => String(i));
  const typeFilter = f.actorId && f.resourceType ? { expr: '#rt = :rt', names: { '#rt': 'resourceType' }, values: { ':rt': f.resourceType } } : undefined;
  const [pattern, sortKey] = f.actorId ? ['byActor', 'gsi2sk'] : f.resourceType ? ['byType', 'gsi3sk'] : ['byAccount', 'gsi1sk'];
  const queries = shards.map((shard) => audits.query(pattern, { accountId, shard, actorId: f.actorId, resourceType: f.resourceType }, { skBetween: [range.lo, range.hi], filter: typeFilter }));
  const page = await shardedPage<Record<string, unknown>>(queries, sortKey, limit);
  return { items: page.items.map(audits.fromItem), next: page.next };
}

/** The write that replaces an audit's changes (an erasure's `[erased]` values, decisions §23), if the audit still exists. */
export const auditChangesWrite = (a: AuditRecord, changes: AuditChange[]): TxWrite => audits.updateAttributes(a, { set: { changes } }, conditions.present());
