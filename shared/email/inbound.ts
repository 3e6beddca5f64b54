import PostalMime, { type Address, type Email, type Mailbox } from 'postal-mime';
import * as z from '../zod.ts';
import { MAX_ATTACHMENTS, MAX_UPLOAD_BYTES } from '../attachments/keys.ts';
import { storeReceivedFiles, type PreparedAttachments, type ReceivedFile } from '../attachments/service.ts';
import type { MailCaller } from '../auth/principal.ts';
import { ensureContact } from '../contacts/service.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { commitMessage, messageWrites } from '../messages/service.ts';
import type { MessageRecord } from '../messages/api.ts';
import { createTicket, findTicket, MAIL_ACTOR, messageAuditWrite, planTicketUpdate, ticketUnchangedCheck, type ChangeContext, type TicketRecord } from '../tickets/service.ts';
import { inboundDomain } from './addresses.ts';
import { attachmentName, followUpNote, isAutomatic, oneLine, textAsHtml, threadCandidates, ticketSubject } from './mail-rules.ts';
import { findMailId, findMailIds, getEmailSettings, getThread, mailIdWrite, threadWrites, ticketOfReplyToken } from './repository.ts';
import { newReplyToken } from './tokens.ts';

/**
 * Inbound mail (decisions §17): a parsed message for one account becomes a
 * reply on the ticket it answers, a follow-up ticket when that one is closed,
 * or a new ticket. Everything one mail makes (the ticket or its change, the
 * message, its attachments' records, its events, its audit, the Message-ID
 * and the thread) commits in one transaction, whose conditional Message-ID
 * item makes a second delivery of the same mail a no-op.
 */

/** A message's text fields hold at most this many characters (decisions §12). */
const CONTENT_MAX = 100_000;

export type MailOutcome = 'ticket' | 'reply' | 'follow_up' | 'duplicate' | 'dropped';

export interface MailResult {
  outcome: MailOutcome;
  ticketId?: string;
  messageId?: string;
  /** Why a mail was dropped, or what was left out of it. */
  note?: string;
  automatic?: boolean;
}

/** Parse a raw RFC 5322 message (bounded: SES receives at most 40 MB, and nesting and header sizes are capped). */
export const parseMail = (raw: Uint8Array): Promise<Email> => PostalMime.parse(raw, { attachmentEncoding: 'arraybuffer', maxNestingDepth: 50, maxHeadersSize: 1024 * 1024 });

class DuplicateMailError extends Error {
  constructor() {
    super('this Message-ID was already received');
    this.name = 'DuplicateMailError';
  }
}

const emailSchema = z.email().check(z.maxLength(254));
const mailboxes = (list: readonly Address[] | undefined): Mailbox[] => (list ?? []).flatMap((a) => ('group' in a && a.group ? a.group : [a as Mailbox]));
const validAddress = (m: Mailbox | undefined): Mailbox | null => (m && emailSchema.safeParse(m.address).success ? m : null);

/** The sender: From (its first mailbox), else Reply-To, else the envelope's MAIL FROM. */
function senderOf(mail: Email, envelopeFrom: string): Mailbox | null {
  return validAddress(mailboxes(mail.from ? [mail.from] : [])[0]) ?? validAddress(mailboxes(mail.replyTo)[0]) ?? validAddress({ name: '', address: envelopeFrom });
}

/**
 * The message's HTML (sanitized as §12) and text, each within the message's
 * limits. sanitize-html with postcss (~170 KB) loads from its own chunk at
 * the first mail with an HTML part, not at every cold start.
 */
async function bodyOf(mail: Email): Promise<{ content: string; textContent: string }> {
  // The text part's trailing line breaks are the MIME body's end, not the customer's words.
  const text = (mail.text ?? '').trimEnd().slice(0, CONTENT_MAX);
  const html = mail.html ? await import('../messages/sanitize.ts') : null;
  let content = html ? html.sanitizeContent(mail.html!).trim() : textAsHtml(text);
  // A newsletter's HTML can exceed what a message holds: its text part (escaped paragraphs) stands in.
  if (content.length > CONTENT_MAX) content = textAsHtml(text.slice(0, CONTENT_MAX / 2));
  return { content, textContent: mail.text === undefined && html ? html.htmlToText(content).slice(0, CONTENT_MAX) : text };
}

/** The mail's attachments and inline images that a message may carry (§14: at most 20, each at most 25 MiB); the rest are named in a note. */
function filesOf(mail: Email): { files: ReceivedFile[]; left: string[] } {
  const files: ReceivedFile[] = [];
  const left: string[] = [];
  mail.attachments.forEach((a, i) => {
    const bytes = new Uint8Array(a.content as ArrayBuffer);
    const name = attachmentName(a.filename, a.mimeType, i);
    if (!bytes.byteLength) return;
    if (bytes.byteLength > MAX_UPLOAD_BYTES || files.length >= MAX_ATTACHMENTS) left.push(name);
    else files.push({ name, contentType: oneLine(a.mimeType, 255) || 'application/octet-stream', bytes });
  });
  return { files, left };
}

/** Most merges a reply follows from the ticket its thread names (a merge of merges is a chain; decisions §20). */
const MERGE_HOPS = 10;

/** The ticket a thread's ticket was merged into, and so on (decisions §20): where a reply to it lands; the last one found if the chain ends in a deleted ticket. */
async function followMerges(accountId: string, t: TicketRecord | null): Promise<TicketRecord | null> {
  for (let hop = 0; t?.mergedInto && hop < MERGE_HOPS; hop++) {
    const next = await findTicket(accountId, t.mergedInto);
    if (!next) break;
    t = next;
  }
  return t;
}

/** Which of the account's tickets a mail answers: by In-Reply-To / References, else by the reply address's token; a merged one's target. */
async function answeredTicket(accountId: string, mail: Email, replyToken: string | null): Promise<TicketRecord | null> {
  const known = await findMailIds(accountId, threadCandidates(mail.inReplyTo, mail.references));
  for (const k of known) {
    const t = await findTicket(accountId, k.ticketId);
    if (t) return followMerges(accountId, t);
  }
  const byToken = replyToken ? await ticketOfReplyToken(accountId, replyToken) : null;
  return byToken ? followMerges(accountId, await findTicket(accountId, byToken)) : null;
}

/**
 * Turn one parsed mail into what decisions §17 says, for one account.
 * `replyToken` is the token of the reply address it was sent to, if any;
 * `fallbackId` names a mail without a Message-ID (SES's id of the receipt).
 */
export async function receiveMail(accountId: string, mail: Email, envelope: { from: string; replyToken: string | null; fallbackId: string; rawKey?: string }): Promise<MailResult> {
  const mailId = mail.messageId?.trim() ? (mail.messageId.trim().startsWith('<') ? mail.messageId.trim() : `<${mail.messageId.trim()}>`) : `<${envelope.fallbackId}@${inboundDomain()}>`;
  if (await findMailId(accountId, mailId)) return { outcome: 'duplicate' };
  const sender = senderOf(mail, envelope.from);
  if (!sender) return { outcome: 'dropped', note: 'no sender address' };
  const settings = await getEmailSettings(accountId);
  const ours = [inboundDomain()];
  const senderLower = sender.address.toLowerCase();
  // Our own mail coming back (a forward of a forward, a misrouted notification): answering it would loop.
  if (ours.some((d) => senderLower.endsWith(`@${d}`)) || settings?.supportAddresses.some((a) => a.toLowerCase() === senderLower)) {
    return { outcome: 'dropped', note: 'sent from one of the account’s own addresses' };
  }
  const automatic = isAutomatic(mail.headers);
  const body = await bodyOf(mail);
  const { files, left } = filesOf(mail);
  if (left.length) logger.warn('email: attachments over the limits were left out', { accountId, mailId, left });
  const ccs = mailboxes(mail.cc)
    .filter((m) => validAddress(m) && !ours.some((d) => m.address.toLowerCase().endsWith(`@${d}`)))
    .slice(0, 50)
    .map((m) => ({ email: m.address, name: oneLine(m.name, 128) || null }));
  const caller: MailCaller = { accountId, mail: true };

  const answered = await answeredTicket(accountId, mail, envelope.replyToken);
  // decisions §24: a mail that answers a ticket's thread shows what was written, not the history it quotes; a first mail stays whole.
  const trimmed = answered ? (await import('./reply-text.ts')).replyText(body.textContent) : null;
  const { content, textContent } = trimmed ? { content: textAsHtml(trimmed), textContent: trimmed } : body;
  const messageId = newId('msg');
  const context: ChangeContext = { via: 'email', actor: MAIL_ACTOR, messageId };
  const at = () => new Date().toISOString();
  const message = (ticketId: string, authorId: string, prefix = ''): MessageRecord => {
    const now = at();
    return {
      id: messageId,
      accountId,
      ticketId,
      type: 'request',
      content: prefix + content,
      textContent,
      authorId,
      attachments: [],
      ccs,
      recipients: [],
      isForward: false,
      channel: 'email',
      emailDelivery: null,
      sendEmail: false,
      rawMail: envelope.rawKey ?? null,
      createdAt: now,
      updatedAt: now,
    };
  };
  const indexWrites = async (ticketId: string, thread: Awaited<ReturnType<typeof getThread>>): Promise<TxWrite[]> => [
    mailIdWrite({ accountId, mailId, ticketId, messageId, direction: 'in', at: at(), rawKey: envelope.rawKey ?? null }, () => new DuplicateMailError()),
    ...threadWrites(accountId, ticketId, thread, [mailId], newReplyToken),
  ];
  let prepared: PreparedAttachments | undefined;
  try {
    if (answered && answered.status !== 'closed') {
      const authorId = (await ensureContact(accountId, answered.requesterEmail ?? sender.address, answered.requesterEmail ? answered.requesterName : oneLine(sender.name, 128))) ?? sender.address;
      prepared = files.length ? await storeReceivedFiles(accountId, answered.id, files) : undefined;
      // The ticket as just read; a retry after a conflict reads it again.
      let read: typeof answered | null = answered;
      await retryOnConflict(async () => {
        const ticket = read ?? (await findTicket(accountId, answered.id)) ?? answered;
        read = null;
        // decisions §17: a customer's reply reopens a pending or resolved ticket.
        const reopen = ticket.status === 'pending' || ticket.status === 'resolved';
        const plan = reopen ? await planTicketUpdate(caller, ticket.id, { status: 'open' }, context) : null;
        const related = plan?.writes.length ? plan.writes : [ticketUnchangedCheck(ticket), messageAuditWrite(ticket, context)];
        const m = { ...message(ticket.id, authorId), attachments: prepared?.attachments ?? [] };
        await commitMessage(m, [...related, ...(prepared?.writes(m.id, m.createdAt) ?? []), ...(await indexWrites(ticket.id, await getThread(accountId, ticket.id)))]);
      });
      return { outcome: 'reply', ticketId: answered.id, messageId, automatic };
    }
    // A new ticket; a follow-up when the mail answers a closed one, whose first message names it.
    const ticketId = newId('tkt');
    const authorId = (await ensureContact(accountId, sender.address, oneLine(sender.name, 128))) ?? sender.address;
    prepared = files.length ? await storeReceivedFiles(accountId, ticketId, files) : undefined;
    const first = { ...message(ticketId, authorId, answered ? followUpNote(answered.id) : ''), attachments: prepared?.attachments ?? [] };
    const index = await indexWrites(ticketId, null);
    await createTicket(
      caller,
      { subject: ticketSubject(mail.subject), status: 'new', priority: 'normal', type: 'question', requesterEmail: sender.address, requesterName: oneLine(sender.name, 128) || null, tags: [] },
      { id: ticketId, context, related: () => [...messageWrites(first), ...(prepared?.writes(first.id, first.createdAt) ?? []), ...index] },
    );
    return { outcome: answered ? 'follow_up' : 'ticket', ticketId, messageId, automatic };
  } catch (err) {
    await prepared?.discard();
    if (err instanceof DuplicateMailError) return { outcome: 'duplicate' };
    throw err;
  }
}
