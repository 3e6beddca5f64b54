import { attachmentKey } from '../attachments/api.ts';
import { ATTACHMENT_PREFIX, idSuffix, objectKeys } from '../attachments/keys.ts';
import { deleteUnderPrefix } from '../attachments/object-cleanup.ts';
import { deleteMessageCounter, deleteTicketMessages, ticketMessages } from './repository.ts';

/** Messages cleared per page (one Query, then BatchWriteItems of 25). */
const PAGE = 100;

/**
 * After `ticket.deleted` (the attachment-cleanup function; this module, above
 * attachments, drives it, as a message names its attachments): the ticket's
 * messages and their attachment records go first, so no message or
 * attachment id leads to an object any more; then every object under the
 * ticket's prefix (the attachments, and any copy a
 * crashed request left there). Idempotent, so a redelivered event, or one
 * handled twice at once, does no harm. Returns false when `budget` messages
 * were cleared and more remain: the caller continues in a follow-up message.
 */
export async function deleteTicketAttachments(accountId: string, ticketId: string, budget = 2_000): Promise<boolean> {
  for (let cleared = 0; ; cleared += PAGE) {
    if (cleared >= budget) return false;
    const page = await ticketMessages(accountId, ticketId, PAGE);
    if (!page.length) break;
    await deleteTicketMessages(accountId, ticketId, page, (m) =>
      (m.attachments ?? []).flatMap((a) => {
        const id = idSuffix(a.id ?? '', ATTACHMENT_PREFIX);
        return id ? [attachmentKey(accountId, id)] : [];
      }),
    );
    if (page.length < PAGE) break;
  }
  await deleteMessageCounter(accountId, ticketId);
  await deleteUnderPrefix(objectKeys.ticketPrefix(accountId, ticketId));
  return true;
}
