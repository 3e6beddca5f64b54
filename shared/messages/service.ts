import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError } from '../domain/errors.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { newId } from '../ids.ts';
import { ticketUnchangedCheck } from '../tickets/repository.ts';
import { getTicket, planTicketUpdate } from '../tickets/service.ts';
import { MESSAGE_CREATED, MESSAGE_EVENT_SOURCE } from './events.ts';
import type { CreateMessageInput, ListMessagesQuery, Message } from './model.ts';
import * as repo from './repository.ts';
import type { MessageRecord } from './repository.ts';
import { htmlToText, sanitizeContent } from './sanitize.ts';

export const toMessageDto = ({ accountId: _a, sendEmail: _s, ...m }: MessageRecord): Message => m;

/**
 * Add a message to a ticket. Its ticket_update (if any) is applied in the
 * same transaction, with the same rules and events as a PUT; otherwise the
 * ticket is only proven unchanged (so a ticket closed meanwhile refuses it).
 * A response with send_email is announced for the email sender.
 */
export function createMessage(p: Principal, input: CreateMessageInput): Promise<MessageRecord> {
  return retryOnConflict(async () => {
    const update = Object.fromEntries(Object.entries(input.ticket_update ?? {}).filter(([, v]) => v !== undefined));
    let related: TxWrite[];
    if (Object.keys(update).length) {
      const plan = await planTicketUpdate(p, input.ticket_id, update);
      related = plan.writes.length ? plan.writes : [ticketUnchangedCheck(plan.current)];
    } else {
      const ticket = await getTicket(p, input.ticket_id);
      if (ticket.status === 'closed') throw new RuleViolationError('TICKET_CLOSED', 'Messages cannot be added to a closed ticket');
      related = [ticketUnchangedCheck(ticket)];
    }
    const now = new Date().toISOString();
    const content = sanitizeContent(input.content);
    const message: MessageRecord = {
      id: newId('msg'),
      accountId: p.accountId,
      ticketId: input.ticket_id,
      type: input.type,
      content,
      textContent: input.text_content ?? htmlToText(content),
      authorId: p.userId,
      attachments: input.attachments ?? [],
      ccs: (input.ccs ?? []).map((c) => ({ email: c.email, name: c.name ?? null })),
      recipients: input.recipients ?? [],
      isForward: input.is_forward,
      // Notes are internal: they never send email.
      sendEmail: input.type === 'response' && input.send_email,
      createdAt: now,
      updatedAt: now,
    };
    const event = newDomainEvent(p.accountId, MESSAGE_CREATED, { message: toMessageDto(message), sendEmail: message.sendEmail }, now);
    await repo.createMessage(message, [...related, ...outboxWrites([event], MESSAGE_EVENT_SOURCE)]);
    return message;
  });
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
