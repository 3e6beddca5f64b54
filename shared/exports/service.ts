import type { Principal } from '../auth/principal.ts';
import { BadRequestError } from '../domain/errors.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import type { ExportQuery } from './model.ts';
import { changePage, isTombstone, TOMBSTONE_DAYS, type ExportKind } from './repository.ts';

/**
 * Incremental export (decisions §15; docs/history.md): the change index of a
 * kind read in `updatedAt#id` order from the cursor's position up to the
 * settle line, 10 seconds ago. A change stamped before the line but committed
 * (or indexed) after a reader passed it would be skipped; the line is far
 * enough back that a commit's delay, the writers' clock skew and the index's
 * lag all fit in it (docs/history.md says why).
 */
export const SETTLE_MS = 10_000;

/** A cursor works for as long as tombstones are kept: a sync resuming within that sees every delete. */
const CURSOR_DAYS = TOMBSTONE_DAYS;

type Exported = { id: string; updatedAt: string; object: unknown };
/**
 * A kind's feed: the records of its change-index entries as its GET answers
 * them. Each exported module owns its feed (its service's export function);
 * the history function assembles them (shared/history/feeds.ts), so this module
 * stays below the modules that write tombstones through it.
 */
export type ExportFeed = (accountId: string, items: Record<string, unknown>[]) => Promise<Exported[]>;

/** The smallest string above `s`: the position just after an entry, for an inclusive range. */
const justAfter = (s: string) => `${s}\u0000`;

export async function exportPage(p: Principal, kind: ExportKind, feed: ExportFeed, q: ExportQuery, now = Date.now()) {
  const list = `export:${kind}`;
  let lo: string;
  if (q.cursor) {
    if (q.start_time) throw new BadRequestError('Give start_time on the first call and cursor after it, not both', [{ field: 'cursor', message: 'not with start_time' }]);
    lo = (await decodeCursor<Record<string, never>>(q.cursor, list, p.accountId, now, CURSOR_DAYS * 86_400_000)).key.lo;
  } else if (q.start_time) lo = q.start_time;
  else throw new BadRequestError('start_time is required on the first call (ISO 8601); then follow cursor', [{ field: 'start_time', message: 'required without cursor' }]);

  // Entries sort as `updatedAt#id`: the settle line alone as the upper bound keeps every change stamped before it.
  const hi = new Date(now - SETTLE_MS).toISOString();
  const page = lo > hi ? { items: [] as Record<string, unknown>[], resumeAfter: undefined, more: false } : await changePage(p.accountId, kind, lo, hi, q.page_size);
  const records = page.items.filter((i) => !isTombstone(i));
  const objects = new Map((await feed(p.accountId, records)).map((o) => [o.id, o]));
  const items = page.items.map((i) => {
    if (isTombstone(i)) return { id: String(i.id), updatedAt: String(i.updatedAt), deleted: true as const };
    const o = objects.get(String(i.id))!;
    return { id: o.id, updatedAt: o.updatedAt, deleted: false as const, object: o.object };
  });
  const cursor = await encodeCursor({ list, accountId: p.accountId, query: {}, key: { lo: page.resumeAfter === undefined ? lo : justAfter(page.resumeAfter) } }, now);
  return { items, cursor, endOfStream: !page.more };
}
