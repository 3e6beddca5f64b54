import { redactAttachmentWrites } from '../attachments/redaction.ts';
import { auditWrite, userActor } from '../audits/service.ts';
import type { AuditChange } from '../audits/model.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite } from '../db/transact.ts';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { getMessageRecord, rewriteMessageWrites, type MessageRecord } from '../messages/api.ts';
import { findTicket } from '../tickets/service.ts';
import type { RedactInput } from './model.ts';

/** What stands in for each character of a redacted text (decisions §23). */
export const REDACTION_MARK = '\u2587';

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** `text` masked everywhere in `within`: ▇ repeated to its length in characters (code points). */
export function masked(within: string, text: string, forms: readonly string[] = [text]): string {
  const mark = REDACTION_MARK.repeat([...text].length);
  // The longest form first, so an escaped form is replaced whole before the raw text inside it could be.
  return [...new Set(forms)].sort((a, b) => b.length - a.length).reduce((out, form) => out.split(form).join(mark), within);
}

/** The forms a text takes in a message's HTML content: as written, and HTML-escaped (with and without escaped quotes). */
export const htmlForms = (text: string) => [text, escapeHtml(text), escapeHtml(text).replace(/"/g, '&quot;')];

/**
 * POST /messages/{id}/redact (decisions §23): every occurrence of `text` in
 * the message's content and textContent becomes ▇ repeated to its length,
 * and the named attachments are marked redacted (listed without a URL), in
 * one transaction with the ticket's audit (via "redaction"), which records
 * that a redaction happened and never the text. Then their files are
 * deleted; a retry of the same request deletes them again, so a failure
 * after the commit is mended by repeating it. The message is never in a
 * search index nor carried by an event after its creation, so nothing else
 * holds the text.
 */
export async function redactMessage(p: Principal, messageId: string, input: RedactInput): Promise<MessageRecord> {
  const { message, files } = await retryOnConflict(async () => {
    const m = await getMessageRecord(p.accountId, messageId);
    const ticket = m ? await findTicket(p.accountId, m.ticketId) : null;
    if (!m || !ticket) throw new NotFoundError('Message');
    const named = [...new Set(input.attachmentIds ?? [])];
    const unknown = named.map((id, i) => ({ id, i })).filter(({ id }) => !m.attachments.some((a) => a.id === id));
    if (unknown.length)
      throw new ValidationError(
        'Invalid request: attachmentIds names attachments this message does not have',
        unknown.map(({ i }) => ({ field: `attachmentIds.${i}`, message: 'not an attachment of this message' })),
      );
    const content = input.text ? masked(m.content, input.text, htmlForms(input.text)) : m.content;
    const textContent = input.text ? masked(m.textContent, input.text) : m.textContent;
    const newlyRedacted = m.attachments.filter((a) => named.includes(a.id) && !a.redacted);
    const files = m.attachments.filter((a) => named.includes(a.id)).map((a) => a.key);
    const changes: AuditChange[] = [
      ...(content !== m.content || textContent !== m.textContent ? [{ field: 'message.content', from: null, to: '[redacted]' }] : []),
      ...(newlyRedacted.length ? [{ field: 'message.attachments', from: null, to: newlyRedacted.map((a) => a.id) }] : []),
    ];
    if (!changes.length) return { message: m, files };
    const now = new Date().toISOString();
    const attachments = m.attachments.map((a) => (named.includes(a.id) ? { ...a, redacted: true as const } : a));
    const next: MessageRecord = { ...m, content, textContent, attachments, updatedAt: now };
    await transactWrite([
      ...rewriteMessageWrites(m, next),
      ...redactAttachmentWrites(p.accountId, newlyRedacted),
      auditWrite({
        accountId: p.accountId,
        resource: { type: 'ticket', id: ticket.id },
        actor: userActor(p),
        via: 'redaction',
        changes,
        messageId: m.id,
        version: ticket.version,
        at: now,
      }),
    ]);
    return { message: next, files };
  });
  // The S3 client loads from its own chunk (as for attachments): the messages function's reads never need it.
  if (files.length) await (await import('../attachments/objects.ts')).deleteObjects(files);
  return message;
}
