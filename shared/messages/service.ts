import { prepareAttachments, toAttachmentDto, type PreparedAttachments } from '../attachments/service.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { mayHaveCommitted, type TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError } from '../domain/errors.ts';
import { answerWrites, isRetryableConflict } from '../idempotency/service.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { userActor } from '../audits/service.ts';
import { getTicket, messageAuditWrite, planTicketUpdate, ticketUnchangedCheck, type ChangeContext, type TicketEdit, type TicketRecord } from '../tickets/service.ts';
import { MESSAGE_CREATED, MESSAGE_EVENT_SOURCE } from './events.ts';
import type { CreateMessageInput, EmailDelivery, ListMessagesQuery, Message, MessageInEvent } from './model.ts';
import * as repo from './repository.ts';
import type { MessageRecord } from './repository.ts';

/**
 * A message as the API answers it: each attachment with a fresh presigned
 * download URL. Entries stored before uploads existed (a bare client token
 * that referred to nothing) have no object and are left out.
 */
export async function toMessageDto({ accountId: _a, sendEmail: _s, rawMail: _r, attachments, ...m }: MessageRecord): Promise<Message> {
  return { ...m, attachments: await Promise.all(attachments.filter((a) => a.key).map(toAttachmentDto)) };
}

/** A message as its event carries it: attachments without keys or URLs (a URL would expire long before a redelivery). */
const eventMessage = ({ accountId: _a, sendEmail: _s, rawMail: _r, attachments, ...m }: MessageRecord): MessageInEvent => ({ ...m, attachments: attachments.map(({ key: _k, ...a }) => a) });

/** A response's email before the sender took it. */
const queuedDelivery = (to: string[], ccs: readonly { email: string }[], at: string): EmailDelivery => ({
  status: 'queued',
  to,
  cc: ccs.map((c) => c.email),
  skipped: [],
  reason: null,
  updatedAt: at,
});

/**
 * Commit a message with the writes that belong to it (its ticket's change or
 * check, its audit, its attachments' records, an inbound mail's index) and
 * its message.created event, in one transaction.
 */
export async function commitMessage(message: MessageRecord, related: TxWrite[]): Promise<void> {
  await repo.createMessage(message, [...related, messageEventWrite(message)]);
}

const messageEventWrite = (message: MessageRecord): TxWrite =>
  outboxWrites([newDomainEvent(message.accountId, MESSAGE_CREATED, { message: eventMessage(message), sendEmail: message.sendEmail }, message.createdAt)], MESSAGE_EVENT_SOURCE)[0];

/** A new message's writes and its message.created event, for a transaction another module commits (the ticket an inbound mail starts). */
export const messageWrites = (message: MessageRecord): TxWrite[] => [...repo.messageItemWrites(message), messageEventWrite(message)];

/** A merged source's note, its first message once the others moved (decisions §20): messageWrites, with the ticket's count proven 0 before it. */
export const onlyMessageWrites = (message: MessageRecord): TxWrite[] => [...repo.onlyMessageWrites(message), messageEventWrite(message)];

/**
 * A note by the caller (a merge's, decisions §20): `content` as a message's
 * (HTML, sanitized; its text derived), sent to no one.
 */
export async function newNote(p: Principal, ticketId: string, content: string, at = new Date().toISOString()): Promise<MessageRecord> {
  const { htmlToText, sanitizeContent } = await import('./sanitize.ts');
  const html = sanitizeContent(content);
  return {
    id: newId('msg', Date.parse(at)),
    accountId: p.accountId,
    ticketId,
    type: 'note',
    content: html,
    textContent: htmlToText(html),
    authorId: p.userId,
    attachments: [],
    ccs: [],
    recipients: [],
    isForward: false,
    channel: 'api',
    emailDelivery: null,
    sendEmail: false,
    createdAt: at,
    updatedAt: at,
  };
}

/**
 * Add a message to a ticket. Its ticket_update (if any) is applied in the
 * same transaction, with the same rules and events as a PUT; otherwise the
 * ticket is only proven unchanged (so a ticket closed meanwhile refuses it).
 * Attachment tokens are checked and their objects copied once the ticket is
 * known to accept the message; the same transaction consumes the tokens, so
 * a token attaches to exactly one message. A failed request deletes its
 * copies. A response with send_email is announced for the email sender.
 */
export async function createMessage(p: Principal, input: CreateMessageInput, opts: Pick<MessageOptions, 'answer'> = {}): Promise<MessageRecord> {
  return (await addMessage(p, input, opts)).message;
}

/** What another module adds to a message (a macro, decisions §22): its ticket edit instead of ticket_update, and how the change came. */
export interface MessageOptions {
  edit?: TicketEdit;
  context?: Omit<ChangeContext, 'messageId'>;
  /** The request's answer for this message: with an Idempotency-Key held, it commits with the message (answerWrites). */
  answer?: (message: MessageRecord) => Promise<unknown>;
}

/** createMessage, answering the ticket as the message left it too. */
export async function addMessage(p: Principal, input: CreateMessageInput, opts: MessageOptions = {}): Promise<{ message: MessageRecord; ticket: TicketRecord }> {
  let prepared: Promise<PreparedAttachments> | undefined;
  try {
    const messageId = newId('msg');
    // decisions §15: one audit of the ticket per message, with the changes its ticket_update made (or none).
    const context: ChangeContext = { via: 'message', actor: userActor(p), ...opts.context, messageId };
    return await retryOnConflict(async () => {
      const update = Object.fromEntries(Object.entries(input.ticket_update ?? {}).filter(([, v]) => v !== undefined));
      let related: TxWrite[];
      let ticket: TicketRecord;
      if (opts.edit || Object.keys(update).length) {
        const plan = await planTicketUpdate(p, input.ticket_id, opts.edit ?? update, context);
        related = plan.writes.length ? plan.writes : [ticketUnchangedCheck(plan.current), messageAuditWrite(plan.current, context)];
        ticket = plan.next;
      } else {
        ticket = await getTicket(p, input.ticket_id);
        if (ticket.status === 'closed') throw new RuleViolationError('TICKET_CLOSED', 'Messages cannot be added to a closed ticket');
        related = [ticketUnchangedCheck(ticket), messageAuditWrite(ticket, context)];
      }
      const requesterEmail = ticket.requesterEmail;
      // Checked and copied once per request, after the ticket answered; a retry after a conflict reuses the copies.
      prepared ??= input.attachments?.length ? prepareAttachments(p, input.ticket_id, input.attachments) : undefined;
      const attaching = await prepared;
      const now = new Date().toISOString();
      // sanitize-html with htmlparser2 and postcss (~170 KB) loads on the first create, from its own chunk
      // (infra/bundling.ts): the messages function's reads never need it.
      const { htmlToText, sanitizeContent } = await import('./sanitize.ts');
      const content = sanitizeContent(input.content);
      // Notes are internal: they never send email.
      const sendEmail = input.type === 'response' && input.send_email;
      const message: MessageRecord = {
        id: messageId,
        accountId: p.accountId,
        ticketId: input.ticket_id,
        type: input.type,
        content,
        textContent: input.text_content ?? htmlToText(content),
        authorId: p.userId,
        attachments: attaching?.attachments ?? [],
        ccs: (input.ccs ?? []).map((c) => ({ email: c.email, name: c.name ?? null })),
        recipients: input.recipients ?? [],
        isForward: input.is_forward,
        channel: 'api',
        emailDelivery: sendEmail ? queuedDelivery(input.recipients?.length ? input.recipients : requesterEmail ? [requesterEmail] : [], input.ccs ?? [], now) : null,
        sendEmail,
        createdAt: now,
        updatedAt: now,
      };
      const answer = opts.answer ? answerWrites(await opts.answer(message)) : [];
      await commitMessage(message, [...related, ...(attaching?.writes(message.id, now) ?? []), ...answer]);
      return { message, ticket };
    }, isRetryableConflict);
  } catch (err) {
    // Nothing was written: this request's copies go (a refused token, a closed ticket, a lost race, an outage). A
    // commit whose answer was lost may hold them: they stay (unreachable objects under the ticket if it did not).
    if (!mayHaveCommitted(err)) await (await prepared?.catch(() => undefined))?.discard();
    throw err;
  }
}

export async function getMessage(p: Principal, id: string): Promise<MessageRecord> {
  const m = await repo.getMessage(p.accountId, id);
  if (!m) throw new NotFoundError('Message');
  return m;
}

export async function listMessages(p: Principal, q: ListMessagesQuery) {
  await getTicket(p, q.ticket_id);
  return repo.listMessages(p.accountId, q.ticket_id, q.sort_order === 'asc', q.page, q.limit);
}
