import type { Audit } from '../audits/model.ts';
import { ValidationError } from '../domain/errors.ts';
import type { TicketEdit } from '../tickets/service.ts';
import type { BulkTicketChange } from './model.ts';

/**
 * The rules of a bulk job as pure functions (no I/O): what a bulk change
 * makes of each ticket, and whether a ticket of a chunk cut short was
 * already changed. test/unit/bulk-jobs.test.ts holds their tables.
 */

/** A ticket has at most this many distinct tags (decisions §6; the PUT's schema says the same). */
export const MAX_TICKET_TAGS = 100;

/** A ticket's tags after a bulk edit: the removed ones left out, the added ones appended (those it has stay where they are). */
export function editedTags(current: readonly string[], add: readonly string[] = [], remove: readonly string[] = []): string[] {
  const kept = current.filter((t) => !remove.includes(t));
  return [...kept, ...add.filter((t) => !kept.includes(t))];
}

/**
 * What a bulk_update applies to one ticket, as the ticket service takes it:
 * the fields as given, or, with addTags/removeTags, a function of the ticket
 * as each attempt reads it (a retry after a conflict re-applies the edit to
 * the tags as they then are, so a concurrent change is never lost).
 */
export function ticketEdit(change: BulkTicketChange): TicketEdit {
  const { addTags, removeTags, ...fields } = change;
  if (addTags === undefined && removeTags === undefined) return fields;
  return (current) => {
    const tags = editedTags(current.tags, addTags, removeTags);
    if (tags.length > MAX_TICKET_TAGS)
      throw new ValidationError(`Invalid ticket: tags: at most ${MAX_TICKET_TAGS} distinct tags per ticket`, [{ field: 'tags', message: `at most ${MAX_TICKET_TAGS} distinct tags per ticket` }]);
    return { ...fields, tags };
  };
}

/**
 * Whether a claimed ticket was already changed by this job in a step that
 * was cut short before recording it: a change committed after the version
 * claimed, through a bulk job, by the job's caller. The ticket's version
 * orders its audits (decisions §15), so the audits after the claim are all
 * the changes since. A claim of 0 (the ticket was not found) was never done.
 */
export function changedByJob(claimedVersion: number, auditsSince: readonly Pick<Audit, 'via' | 'actor'>[], userId: string): boolean {
  return claimedVersion > 0 && auditsSince.some((a) => a.via === 'bulk' && a.actor.type === 'user' && a.actor.id === userId);
}
