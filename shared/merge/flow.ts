import { moveAttachments } from '../attachments/service.ts';
import { userActor } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { MAX_TRANSACTION_ITEMS, transactWrite, type TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError, ValidationError } from '../domain/errors.ts';
import { moveMessageWrites, ticketMessages, type MessageRecord } from '../messages/api.ts';
import { messageWrites, newNote, onlyMessageWrites } from '../messages/service.ts';
import { findTicket, ticketChangeWrites, ticketMergedWrite, ticketPresentCheck, type TicketRecord } from '../tickets/service.ts';
import type { MergeHooks } from './executor.ts';
import type { MergeInput } from './model.ts';
import { mergedTags, MOVE_BATCH, moveBatchSize, sourceNote, targetNote } from './rules.ts';

/**
 * The steps of a merge (decisions §20), one source at a time: its messages
 * move to the target, a transaction per batch (each message's copies and both
 * counts at once, so a message is never lost nor on both tickets); then one
 * transaction closes the source and changes the target, with their notes,
 * events and audits. Every step reads what is stored, so a step cut short
 * (between two moves, or between the last move and the close) resumes where it
 * stopped; a source already merged into the target is done.
 */

const closed = (message: string) => new RuleViolationError('TICKET_CLOSED', message);

/** A step stops moving after this long and leaves the rest to the next step (the consumer's timeout is 60 s). */
const MOVE_BUDGET_MS = 25_000;

/** One source into the target: done, 'unfinished' when the budget ran out with messages left, or the source's error. */
export function mergeSource(p: Principal, sourceId: string, input: MergeInput, hooks: MergeHooks): Promise<void | 'unfinished'> {
  const until = Date.now() + MOVE_BUDGET_MS;
  // A conflict (a message or a ticket changed meanwhile) reads everything again and carries on.
  return retryOnConflict(async () => {
    const [source, target] = await Promise.all([findTicket(p.accountId, sourceId), findTicket(p.accountId, input.targetId)]);
    if (!source) throw new NotFoundError('Ticket');
    if (source.mergedInto === input.targetId) return; // a step cut short after the close
    if (source.status === 'closed') throw closed('A closed or merged ticket cannot be merged');
    if (!target) throw new NotFoundError('Target ticket');
    if (target.status === 'closed') throw closed('The target ticket was closed');
    // Refuse before anything moves what the close could not do.
    if ((await closeWrites(p, source, target, input)).length > MAX_TRANSACTION_ITEMS)
      throw new ValidationError('The merge changes too many records at once', [{ field: 'ids', message: `${source.id}: too many words and tags to merge in one change` }]);
    for (;;) {
      const page = await ticketMessages(p.accountId, source.id, MOVE_BATCH);
      if (!page.length) break;
      const moved = await moveMessages(p.accountId, source.id, target.id, page);
      await hooks.afterMove?.(source.id, moved);
      if (Date.now() > until) return 'unfinished';
    }
    await transactWrite(await closeWrites(p, source, target, input));
  });
}

/** Move the first messages of a page that fit one transaction; how many moved. */
async function moveMessages(accountId: string, from: string, to: string, page: readonly MessageRecord[]): Promise<number> {
  const batch = page.slice(0, moveBatchSize(page.map((m) => ({ attachments: m.attachments, bytes: m.content.length + m.textContent.length + 2_000 }))));
  const attachments = await moveAttachments(accountId, to, batch);
  const moved = batch.map((m) => ({ ...m, ticketId: to, attachments: attachments.byMessage.get(m.id) ?? m.attachments }));
  // The target must still be there: messages moved onto a deleted ticket would be cleared with it.
  await transactWrite([...moveMessageWrites(accountId, from, moved), ...attachments.writes, ticketPresentCheck(accountId, to)]);
  await attachments.discardOld();
  return batch.length;
}

/**
 * The close (decisions §20), one transaction: the source closed with
 * `mergedInto` and its note (its only message: its count must be 0), the
 * target with the union of the tags and its note, ticket.updated for both
 * (the target's names `mergedFrom`), ticket.merged, audits via merge; both
 * tickets version-checked.
 */
async function closeWrites(p: Principal, source: TicketRecord, target: TicketRecord, input: MergeInput): Promise<TxWrite[]> {
  const at = new Date().toISOString();
  const [toSource, toTarget] = await Promise.all([newNote(p, source.id, sourceNote(target.id, input.sourceComment), at), newNote(p, target.id, targetNote(source, target, input.targetComment), at)]);
  const via = (messageId: string) => ({ via: 'merge' as const, actor: userActor(p), messageId });
  return [
    ...(await ticketChangeWrites(p, [
      { current: source, next: { ...source, status: 'closed', mergedInto: target.id, updatedAt: at, version: source.version + 1 }, context: via(toSource.id) },
      {
        current: target,
        next: { ...target, tags: mergedTags(target.tags, source.tags), updatedAt: at, version: target.version + 1 },
        context: via(toTarget.id),
        extra: { mergedFrom: { from: null, to: source.id } },
      },
    ])),
    ...onlyMessageWrites(toSource),
    ...messageWrites(toTarget),
    ticketMergedWrite(p, target.id, source.id, at),
  ];
}
