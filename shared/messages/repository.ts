import { bindEntity, conditions } from '../db/entity.ts';
import { messageEntities } from '../db/entities/messages.ts';
import { listCounter } from '../db/list-counter.ts';
import { batchDelete, numberedPage, queryPage, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import type { StoredAttachment } from '../attachments/model.ts';
import { ConflictError, NotFoundError } from '../domain/errors.ts';
import type { EmailDelivery, Message } from './model.ts';

/** A message as stored: its attachments carry their object keys, the API's download URLs are made on each read. */
export interface MessageRecord extends Omit<Message, 'attachments'> {
  accountId: string;
  sendEmail: boolean;
  /** The object key of the mail a message was made from, as received (decisions §24: GET /messages/:id/raw); null for others. */
  rawMail?: string | null;
  attachments: StoredAttachment[];
}

/** Both copies of a message hold the same attributes; its `type` is stored as `messageType` (`type` names the item kind). */
const mapping = {
  fields: [
    'id',
    'accountId',
    'ticketId',
    'type',
    'content',
    'textContent',
    'authorId',
    'attachments',
    'ccs',
    'recipients',
    'isForward',
    'channel',
    'emailDelivery',
    'sendEmail',
    'rawMail',
    'createdAt',
    'updatedAt',
  ],
  // Messages written before the email channel came through the API and carry no delivery record.
  normalize: (m: MessageRecord) => ({ ...m, channel: m.channel ?? 'api' }),
  renames: { type: 'messageType' },
} as const;
const byId = bindEntity<MessageRecord>(messageEntities.message, mapping);
const underTicketCopies = bindEntity<MessageRecord>(messageEntities.ticketMessage, mapping);

/** The query of a ticket's copies, in time order (ids are time-ordered). */
const underTicket = (accountId: string, ticketId: string, forward = true) =>
  underTicketCopies.query('byTicket', { accountId, ticketId }, { forward, skBeginsWith: underTicketCopies.key({ accountId, ticketId, id: '' }).sk });

/** Messages never change, so the copy by id and the copy under the ticket cannot drift; both commit with `related`. */
export async function createMessage(m: MessageRecord, related: TxWrite[]): Promise<void> {
  await transactWrite([...messageItemWrites(m), ...related]);
}

/** The items of a new message (both copies and its ticket's count), for a transaction another module commits (a ticket made from a mail). */
export const messageItemWrites = (m: MessageRecord): TxWrite[] => [
  byId.put(m, conditions.absent()),
  underTicketCopies.put(m, conditions.absent()),
  listCounter.write(m.accountId, `TMSG#${m.ticketId}`, 1),
];

/**
 * The writes that move messages to another ticket (a merge, decisions §20),
 * for one transaction: each message's copy by id names its new ticket (and its
 * attachments' new keys), its copy under the old ticket goes only if it is
 * still as read (a delivery status recorded meanwhile fails the move, which
 * reads again), a copy under the new ticket comes, and both tickets' counts
 * move. Ids and `createdAt` stay, so the new ticket's list stays in time order.
 */
export function moveMessageWrites(accountId: string, from: string, moved: readonly MessageRecord[]): TxWrite[] {
  if (!moved.length) return [];
  const to = moved[0].ticketId;
  const stale = () => new ConflictError('A message changed while it was being moved');
  return [
    ...moved.flatMap((m) => [
      byId.updateAttributes(
        { accountId, id: m.id },
        { set: { ticketId: to, attachments: m.attachments } },
        { expr: '#t = :from', names: { '#t': 'ticketId' }, values: { ':from': from }, error: stale },
      ),
      underTicketCopies.delete({ accountId, ticketId: from, id: m.id }, { expr: 'attribute_exists(pk) AND #u = :u', names: { '#u': 'updatedAt' }, values: { ':u': m.updatedAt }, error: stale }),
      underTicketCopies.put(m, conditions.absent()),
    ]),
    listCounter.write(accountId, `TMSG#${from}`, -moved.length),
    listCounter.write(accountId, `TMSG#${to}`, moved.length),
  ];
}

/**
 * The items of a ticket's first message once its others have moved away (a
 * merged source's note): as messageItemWrites, with the ticket's count
 * proven 0 before it, so a message that arrived after the last move fails
 * the transaction (which moves it and tries again) instead of staying behind.
 */
export const onlyMessageWrites = (m: MessageRecord): TxWrite[] => [
  byId.put(m, conditions.absent()),
  underTicketCopies.put(m, conditions.absent()),
  listCounter.writeIfEmpty(m.accountId, `TMSG#${m.ticketId}`, 1, () => new ConflictError('A message was added to the ticket while it was being merged')),
];

export async function getMessage(accountId: string, id: string): Promise<MessageRecord | null> {
  return byId.get({ accountId, id });
}

/**
 * Record what became of a response's email on both copies of the message, in
 * one transaction so they cannot drift (the only change a message ever sees).
 */
export async function setEmailDelivery(accountId: string, ticketId: string, id: string, delivery: EmailDelivery): Promise<void> {
  const parts = { set: { emailDelivery: delivery, updatedAt: delivery.updatedAt } };
  const exists = conditions.present(() => new NotFoundError('Message'));
  try {
    await transactWrite([byId.updateAttributes({ accountId, id }, parts, exists), underTicketCopies.updateAttributes({ accountId, ticketId, id }, parts, exists)]);
  } catch (err) {
    // A merge moved the message to another ticket since its event named this one (decisions §20): record it there.
    const now = err instanceof NotFoundError ? await getMessage(accountId, id) : null;
    if (!now || now.ticketId === ticketId) throw err;
    await setEmailDelivery(accountId, now.ticketId, id, delivery);
  }
}

/** What a redaction or an erasure (decisions §23) rewrites of a message; the rest stays. */
export type MessageRewrite = Pick<MessageRecord, 'content' | 'textContent' | 'attachments' | 'ccs' | 'recipients' | 'authorId' | 'emailDelivery' | 'updatedAt'>;

/** Thrown when a message changed since it was read (a concurrent redaction, or its email's delivery); the caller re-reads. */
export class StaleMessageError extends ConflictError {}

/**
 * The writes that rewrite both copies of a message (a redaction or an
 * erasure, decisions §23), each only while the message is still as read
 * (`updatedAt`), for one transaction with the change's audit.
 */
export function rewriteMessageWrites(m: MessageRecord, next: MessageRewrite): TxWrite[] {
  const parts = { set: { ...next } };
  const unchanged = { expr: 'updatedAt = :read', values: { ':read': m.updatedAt }, error: () => new StaleMessageError('The message changed meanwhile') };
  return [byId.updateAttributes(m, parts, unchanged), underTicketCopies.updateAttributes(m, parts, unchanged)];
}

/** A page of a ticket's messages (its copies under the ticket) in time order, from `startKey`: erasure and a person's data walk a ticket with it. */
export async function ticketMessagesPage(accountId: string, ticketId: string, limit: number, startKey?: Key): Promise<{ items: MessageRecord[]; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...underTicket(accountId, ticketId), limit, startKey });
  return { items: page.items.map(underTicketCopies.fromItem), nextKey: page.nextKey };
}

/** A numbered page of a ticket's messages in time order (ids are time-ordered), with the total. */
export async function listMessages(accountId: string, ticketId: string, forward: boolean, page: number, limit: number) {
  const r = await numberedPage<Record<string, unknown>>(
    underTicket(accountId, ticketId, forward),
    page,
    limit,
    // The ticket's message counter (written with each message), read beside the page.
    listCounter.read(accountId, `TMSG#${ticketId}`),
  );
  return { items: r.items.map(underTicketCopies.fromItem), total: r.total };
}

/** The oldest `limit` messages still stored under a ticket (its copies under the ticket), for clearing a deleted ticket. */
export async function ticketMessages(accountId: string, ticketId: string, limit: number): Promise<MessageRecord[]> {
  return (await queryPage<Record<string, unknown>>({ ...underTicket(accountId, ticketId), limit })).items.map(underTicketCopies.fromItem);
}

/**
 * Delete a deleted ticket's messages: first what readers reach (each message
 * by id, its attachments by id), then the copies under the ticket, which are
 * how a retry finds the rest. Idempotent; not a transaction (nothing reads
 * them any more: the ticket is gone and takes no new messages).
 */
export async function deleteTicketMessages(accountId: string, ticketId: string, list: readonly MessageRecord[], attachmentKeys: (m: MessageRecord) => Key[]): Promise<void> {
  await batchDelete(list.flatMap((m) => [byId.key({ accountId, id: m.id }), ...attachmentKeys(m)]));
  await batchDelete(list.map((m) => underTicketCopies.key({ accountId, ticketId, id: m.id })));
}

/** The ticket's message counter, once its messages are gone. */
export const deleteMessageCounter = (accountId: string, ticketId: string) => batchDelete([listCounter.key(accountId, `TMSG#${ticketId}`)]);
