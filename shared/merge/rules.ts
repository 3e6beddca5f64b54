import type { TicketRecord } from '../tickets/service.ts';

/**
 * The rules of a merge as pure functions (no I/O): the target's tags, the
 * notes both tickets get, and how many messages one move transaction takes.
 * test/unit/merge.test.ts holds their tables.
 */

/** A ticket has at most this many distinct tags (decisions §6). */
const MAX_TAGS = 100;

/** The target's tags after a merge: its own first, then the source's it lacks, in their order, at most 100 (those past it are left out). */
export const mergedTags = (target: readonly string[], source: readonly string[]): string[] => [...new Set([...target, ...source])].slice(0, MAX_TAGS);

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The requester as a note names them: "Name <email>", or either alone. */
const requesterOf = (t: Pick<TicketRecord, 'requesterName' | 'requesterEmail'>) =>
  t.requesterName && t.requesterEmail ? `${t.requesterName} <${t.requesterEmail}>` : (t.requesterEmail ?? t.requesterName ?? null);

/** The source's note (decisions §20): the caller's comment, or "Merged into tkt_…". */
export const sourceNote = (targetId: string, comment: string | null): string => comment ?? `<p>Merged into ${targetId}</p>`;

/**
 * The target's note for one source: the caller's comment, or "Merged tkt_…
 * into this ticket", naming the source's requester when it is not the
 * target's (the same address, in any case, is the same requester).
 */
export function targetNote(source: Pick<TicketRecord, 'id' | 'requesterName' | 'requesterEmail'>, target: Pick<TicketRecord, 'requesterEmail'>, comment: string | null): string {
  if (comment !== null) return comment;
  const same = (source.requesterEmail ?? '').toLowerCase() === (target.requesterEmail ?? '').toLowerCase();
  const requester = same ? null : requesterOf(source);
  return `<p>Merged ${source.id} into this ticket${requester ? ` (requester: ${escapeHtml(requester)})` : ''}</p>`;
}

/** Most messages one move transaction takes: 3 items each, the two counts and the target's check stay under DynamoDB's 100 items. */
export const MOVE_BATCH = 25;
/** DynamoDB's items per transaction, and the bytes a move transaction stays under (its limit is 4 MB). */
const MAX_ITEMS = 100;
const MAX_BYTES = 3_000_000;

/**
 * How many of a page of messages (oldest first) one move transaction takes:
 * as many as fit its items (3 per message, 1 per attachment, 3 more) and its
 * bytes (each message's copy is written whole), at least one.
 */
export function moveBatchSize(messages: readonly { attachments: readonly unknown[]; bytes: number }[]): number {
  let items = 3;
  let bytes = 0;
  let n = 0;
  for (const m of messages.slice(0, MOVE_BATCH)) {
    items += 3 + m.attachments.length;
    bytes += m.bytes;
    if (n > 0 && (items > MAX_ITEMS || bytes > MAX_BYTES)) break;
    n++;
  }
  return n;
}
