import type { Principal } from '../auth/principal.ts';
import { hasDeskRole } from '../auth/principal.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError } from '../domain/errors.ts';
import { newId } from '../ids.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import type { AccountAuditsQuery, Audit, AuditActor, AuditChange, AuditResourceType, AuditVia, TicketAuditsQuery } from './model.ts';
import * as repo from './repository.ts';
import type { AuditRecord } from './repository.ts';

/**
 * Audits (decisions §15): one per committed change, written by the module
 * that makes the change, in its transaction, through `auditWrite`. The rules
 * of what an audit holds (which fields, no secrets, bounded values) are the
 * pure functions below; reading is the two lists at the end.
 */

export interface AuditInput {
  accountId: string;
  resource: { type: AuditResourceType; id: string };
  actor: AuditActor;
  via: AuditVia;
  changes: AuditChange[];
  messageId?: string | null;
  deleted?: boolean;
  /** Order within the resource (a ticket's version after the change); other resources list by time. */
  version?: number;
  at?: string;
}

/** Names no audit ever holds a value of: credentials are audited by id only (decisions §15). */
const SECRET_FIELDS = /^(signingSecret|secret|key|apiKey|keyHash|apiKeyHashes|token|password|.*Secret|.*Token)$/;

/** Longest text an audit keeps of one value; longer values are cut and the change says so. */
export const AUDIT_TEXT_LIMIT = 4_096;

/** Cut long strings inside a value; returns whether anything was cut. */
function bounded(value: unknown): { value: unknown; cut: boolean } {
  if (typeof value === 'string') return value.length > AUDIT_TEXT_LIMIT ? { value: `${value.slice(0, AUDIT_TEXT_LIMIT)}…`, cut: true } : { value, cut: false };
  if (Array.isArray(value)) {
    const parts = value.map(bounded);
    return { value: parts.map((p) => p.value), cut: parts.some((p) => p.cut) };
  }
  if (value && typeof value === 'object') {
    const parts = Object.entries(value).map(([k, v]) => [k, bounded(v)] as const);
    return { value: Object.fromEntries(parts.map(([k, p]) => [k, p.value])), cut: parts.some(([, p]) => p.cut) };
  }
  return { value: value ?? null, cut: false };
}

/** The changes as stored: secrets left out, long text cut (the audit then stays small whatever the record holds). */
export function safeChanges(changes: readonly AuditChange[]): AuditChange[] {
  return changes
    .filter((c) => !SECRET_FIELDS.test(c.field.split('.').pop() ?? c.field))
    .map((c) => {
      const from = bounded(c.from);
      const to = bounded(c.to);
      return { field: c.field, from: from.value, to: to.value, ...(from.cut || to.cut ? { truncated: true } : {}) };
    });
}

/** JSON with object keys sorted: a map read back from DynamoDB need not keep its keys' order. */
const canonical = (v: unknown): string =>
  JSON.stringify(v ?? null, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** The fields that differ between two versions of a record (`before` null: a create lists every set field). */
export function diffFields<R extends object>(before: R | null, after: R, fields: readonly (keyof R & string)[]): AuditChange[] {
  const out: AuditChange[] = [];
  for (const f of fields) {
    const from = before ? (before[f] ?? null) : null;
    const to = after[f] ?? null;
    if (before ? !same(from, to) : to !== null && !(Array.isArray(to) && !to.length)) out.push({ field: f, from, to });
  }
  return out;
}

/** A resource's order key of its audits: a ticket's version, zero-padded so strings sort as numbers. */
const seqOf = (version: number) => String(version).padStart(10, '0');

/** The audit record of a change, ready to write. */
export function newAudit(a: AuditInput): AuditRecord {
  const at = a.at ?? new Date().toISOString();
  return {
    id: newId('aud', Date.parse(at)),
    accountId: a.accountId,
    createdAt: at,
    resourceType: a.resource.type,
    resourceId: a.resource.id,
    actorType: a.actor.type,
    actorId: a.actor.id,
    via: a.via,
    changes: safeChanges(a.changes),
    messageId: a.messageId ?? null,
    deleted: a.deleted ?? false,
    seq: seqOf(a.version ?? 0),
    expiresAt: repo.auditExpiry(at),
  };
}

/** The write that records a change, for the change's own transaction. */
export const auditWrite = (a: AuditInput): TxWrite => repo.auditPut(newAudit(a));

/** The actor of a user's request. */
export const userActor = (p: Pick<Principal, 'userId'>): AuditActor => ({ type: 'user', id: p.userId });
/** The service itself (distribution, clean-ups, the admin CLI). */
export const SYSTEM_ACTOR: AuditActor = { type: 'system', id: null };

export const toAuditDto = (a: AuditRecord): Audit => ({
  id: a.id,
  createdAt: a.createdAt,
  resource: { type: a.resourceType, id: a.resourceId },
  actor: { type: a.actorType, id: a.actorId },
  via: a.via,
  changes: a.changes,
  messageId: a.messageId,
  deleted: a.deleted,
});

const TICKET_LIST = 'ticket-audits';
const ACCOUNT_LIST = 'audits';

/**
 * A page of a ticket's audits, oldest first unless `desc`. Readable while the
 * ticket exists (viewer or above) and, once it is deleted, by admins; a ticket
 * with no audits at all answers 404 either way.
 */
export async function listTicketAudits(p: Principal, ticketId: string, q: TicketAuditsQuery, ticketExists: (id: string) => Promise<boolean>) {
  let order = q.sort_order;
  let after: string | undefined;
  if (q.after) {
    const c = await decodeCursor<{ ticketId: string; order: 'asc' | 'desc' }>(q.after, TICKET_LIST, p.accountId);
    if (c.query.ticketId !== ticketId) throw new NotFoundError('Ticket');
    order = c.query.order;
    after = c.key.sk;
  }
  const [exists, page] = await Promise.all([ticketExists(ticketId), repo.resourcePage(p.accountId, 'ticket', ticketId, order === 'asc', q.page_size, after)]);
  if (!exists && (!hasDeskRole(p.role, 'admin') || (!page.items.length && !after))) throw new NotFoundError('Ticket');
  const next = page.next ? await encodeCursor({ list: TICKET_LIST, accountId: p.accountId, query: { ticketId, order }, key: { sk: page.next } }) : null;
  return { audits: page.items.map(toAuditDto), next };
}

/**
 * A ticket's audits committed after it was at `version`, oldest first (at
 * most `limit`): the changes made since a reader saw that version (a bulk job
 * resuming a chunk asks whether its own change went in).
 */
export async function ticketAuditsAfter(accountId: string, ticketId: string, version: number, limit = 25): Promise<Audit[]> {
  const page = await repo.resourcePage(accountId, 'ticket', ticketId, true, limit, `${seqOf(version)}#\uffff`);
  return page.items.map(toAuditDto);
}

/** The smallest string above `s`: an exclusive lower bound for BETWEEN. */
const justAfter = (s: string) => `${s}\u0000`;
const END = '\uffff';

interface AccountLogQuery {
  resourceType?: string;
  resourceId?: string;
  actorId?: string;
  since?: string;
  until?: string;
}

/** A page of the account's audit log (admin or above), in commit order, with its filters. */
export async function listAccountAudits(p: Principal, q: AccountAuditsQuery) {
  let query: AccountLogQuery = { resourceType: q.resource_type, resourceId: q.resource_id, actorId: q.actor_id, since: q.since, until: q.until };
  let after: string | undefined;
  if (q.after) {
    const c = await decodeCursor<AccountLogQuery>(q.after, ACCOUNT_LIST, p.accountId);
    query = c.query;
    after = c.key.sk;
  }
  let page: { items: AuditRecord[]; next?: string };
  if (query.resourceId) {
    // One resource: its own partition, in commit order; the time window and actor are filters on a bounded partition.
    const all = await repo.resourcePage(p.accountId, query.resourceType!, query.resourceId, true, q.page_size, after);
    page = { ...all, items: all.items.filter((a) => (!query.actorId || a.actorId === query.actorId) && (!query.since || a.createdAt >= query.since) && (!query.until || a.createdAt <= query.until)) };
  } else {
    // A key condition takes no empty string: '0' sorts below every timestamp.
    const lo = after !== undefined ? justAfter(after) : (query.since ?? '0');
    const hi = query.until ? `${query.until}#${END}` : END;
    page = lo > hi ? { items: [] } : await repo.logPage(p.accountId, { resourceType: query.resourceType, actorId: query.actorId }, { lo, hi }, q.page_size);
  }
  const next = page.next ? await encodeCursor({ list: ACCOUNT_LIST, accountId: p.accountId, query, key: { sk: page.next } }) : null;
  return { audits: page.items.map(toAuditDto), next };
}
