import { writeNow } from '../db/transact.ts';
import * as repo from './repository.ts';

/**
 * What an erasure (decisions §23) does to audits, apart from the service
 * every change's transaction loads: the values that held an erased contact
 * read `[erased]`.
 */

/** What an erased value reads as in an audit (decisions §23). */
export const ERASED_VALUE = '[erased]';

/**
 * A value with what was erased replaced by `[erased]`, nested values included:
 * a string that is one of `erased` (case-insensitive, a name or an address)
 * reads `[erased]`, and an address (`@`) inside a longer string is replaced
 * where it occurs. A name inside a longer text is left alone: "Ann" must not
 * turn "Annual report" into "[erased]ual report".
 */
export function erasedValue(value: unknown, erased: readonly string[]): unknown {
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase();
    if (erased.includes(lower)) return ERASED_VALUE;
    return erased.filter((e) => e.includes('@') && lower.includes(e)).reduce((out, e) => out.replace(new RegExp(e.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), ERASED_VALUE), value);
  }
  if (Array.isArray(value)) return value.map((v) => erasedValue(v, erased));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, erasedValue(v, erased)]));
  return value;
}

/**
 * An erasure's pass over one ticket's audits (decisions §23): every value
 * that holds one of `erased` (a name, an email; case-insensitive) reads
 * `[erased]` in its place, page by page. Idempotent. Answers how many
 * audits were rewritten.
 */
export async function eraseTicketAuditValues(accountId: string, ticketId: string, erased: readonly string[]): Promise<number> {
  const lower = [...new Set(erased.map((e) => e.trim().toLowerCase()).filter((e) => e.length > 0))];
  let rewritten = 0;
  let after: string | undefined;
  do {
    const page = await repo.resourcePage(accountId, 'ticket', ticketId, true, 100, after);
    const writes = page.items.flatMap((a) => {
      const changes = a.changes.map((c) => ({ ...c, from: erasedValue(c.from, lower), to: erasedValue(c.to, lower) }));
      return JSON.stringify(changes) === JSON.stringify(a.changes) ? [] : [repo.auditChangesWrite(a, changes)];
    });
    // One write per audit, each on its own: an audit is its own record, and a rewrite is idempotent.
    for (const w of writes) await writeNow(w);
    rewritten += writes.length;
    after = page.next;
  } while (after);
  return rewritten;
}
