import { createHash } from 'node:crypto';
import { bindEntity, conditions } from '../db/entity.ts';
import { emailEntities } from '../db/entities/email.ts';
import { batchDelete } from '../db/query.ts';
import { writeNow, type TxWrite } from '../db/transact.ts';

/** The email channel's items (shared/db/entities/email.ts). */

export interface EmailSettingsRecord {
  accountId: string;
  supportAddresses: string[];
  fromName: string | null;
  version: number;
  updatedAt: string;
}
const settings = bindEntity<EmailSettingsRecord>(emailEntities.emailSettings, { fields: ['accountId', 'supportAddresses', 'fromName', 'version', 'updatedAt'] });

export const getEmailSettings = (accountId: string) => settings.get({ accountId }, { consistent: true });

/** The settings' write: created once (absent) or replaced at the version read. */
export const emailSettingsWrite = (next: EmailSettingsRecord, current: EmailSettingsRecord | null): TxWrite =>
  settings.put(next, current ? conditions.version('version', current.version) : conditions.absent());

/** A Message-ID as its index keys it: without angle brackets or surrounding space (ids are case-sensitive, RFC 5322 §3.6.4). */
export const normalizeMailId = (id: string) => id.trim().replace(/^<|>$/g, '');
const hashOf = (id: string) => createHash('sha256').update(normalizeMailId(id)).digest('base64url');

export interface MailIdRecord {
  accountId: string;
  hash: string;
  /** The Message-ID as received or sent. */
  mailId: string;
  ticketId: string;
  /** The message the mail became or was sent for. */
  messageId: string;
  direction: 'in' | 'out';
  at: string;
  /** A received mail's raw message in the bucket (the receipt rule's object), so an erasure (decisions §23) can delete it. */
  rawKey?: string | null;
}
const mailIds = bindEntity<MailIdRecord>(emailEntities.mailId, { fields: ['accountId', 'hash', 'mailId', 'ticketId', 'messageId', 'direction', 'at', 'rawKey'] });

/**
 * The index write of one Message-ID. A received mail's is conditional
 * (`firstTime`): the same Message-ID delivered twice cancels the second
 * delivery's transaction, so it becomes one message.
 */
export function mailIdWrite(r: Omit<MailIdRecord, 'hash'>, firstTime: () => Error | undefined): TxWrite {
  const error = firstTime();
  return mailIds.put({ ...r, hash: hashOf(r.mailId) }, error ? conditions.absent(() => error) : undefined);
}

/** Whether the account already received a mail with this Message-ID. */
export const findMailId = (accountId: string, mailId: string) => mailIds.get({ accountId, hash: hashOf(mailId) }, { consistent: true });

/** The indexed Message-IDs among these (one BatchGet), in the order given. */
export async function findMailIds(accountId: string, ids: readonly string[]): Promise<MailIdRecord[]> {
  if (!ids.length) return [];
  const found = await mailIds.getMany(ids.map((id) => ({ accountId, hash: hashOf(id) })));
  const byHash = new Map(found.map((r) => [r.hash, r]));
  return ids.map((id) => byHash.get(hashOf(id))).filter((r): r is MailIdRecord => Boolean(r));
}

/** How many Message-IDs a thread keeps for References: the first (the thread's root) and the latest. */
export const THREAD_IDS_KEPT = 20;

export interface MailThreadRecord {
  accountId: string;
  ticketId: string;
  replyToken: string;
  mailIds: string[];
  version: number;
}
const threads = bindEntity<MailThreadRecord>(emailEntities.mailThread, { fields: ['accountId', 'ticketId', 'replyToken', 'mailIds', 'version'] });

export const getThread = (accountId: string, ticketId: string) => threads.get({ accountId, ticketId }, { consistent: true });

/** The Message-IDs a thread keeps with `add` appended: the root and the latest, THREAD_IDS_KEPT in all. */
export const appendIds = (ids: readonly string[], add: readonly string[]): string[] => {
  const all = [...ids, ...add.filter((id) => !ids.includes(id))];
  return all.length <= THREAD_IDS_KEPT ? all : [all[0], ...all.slice(all.length - THREAD_IDS_KEPT + 1)];
};

/** The thread's write with new Message-IDs: created (with its reply token's item) or replaced at the version read. */
export function threadWrites(accountId: string, ticketId: string, current: MailThreadRecord | null, add: readonly string[], newToken: () => string): TxWrite[] {
  if (current) return [threads.put({ ...current, mailIds: appendIds(current.mailIds, add), version: current.version + 1 }, conditions.version('version', current.version))];
  const replyToken = newToken();
  return [threads.put({ accountId, ticketId, replyToken, mailIds: appendIds([], add), version: 1 }, conditions.absent()), tokens.put({ accountId, token: replyToken, ticketId }, conditions.absent())];
}

interface ReplyTokenRecord {
  accountId: string;
  token: string;
  ticketId: string;
}
const tokens = bindEntity<ReplyTokenRecord>(emailEntities.replyToken, { fields: ['accountId', 'token', 'ticketId'] });

export const ticketOfReplyToken = async (accountId: string, token: string) => (await tokens.get({ accountId, token }))?.ticketId ?? null;

export interface UndeliverableRecord {
  accountId: string;
  email: string;
  reason: 'bounce' | 'complaint';
  detail: string | null;
  at: string;
}
const undeliverable = bindEntity<UndeliverableRecord>(emailEntities.undeliverable, { fields: ['accountId', 'email', 'reason', 'detail', 'at'] });

export const markUndeliverable = (r: UndeliverableRecord) => writeNow(undeliverable.put(r));

/** Which of these addresses are marked undeliverable (one BatchGet). */
export async function undeliverableOf(accountId: string, emails: readonly string[]): Promise<Set<string>> {
  if (!emails.length) return new Set();
  const found = await undeliverable.getMany(emails.map((email) => ({ accountId, email })));
  return new Set(found.map((r) => r.email.toLowerCase()));
}

/**
 * Forget a ticket's mail thread (an erasure, decisions §23): the thread, its
 * reply token and the Message-IDs it names are deleted, so a later mail
 * threads to nothing and makes a new ticket. Answers the raw mail keys the
 * received ones name (for the bucket). Idempotent.
 */
export async function forgetThread(accountId: string, ticketId: string): Promise<string[]> {
  const thread = await getThread(accountId, ticketId);
  if (!thread) return [];
  const known = await findMailIds(accountId, thread.mailIds);
  await batchDelete([...known.map((r) => mailIds.key(r)), tokens.key({ accountId, token: thread.replyToken }), threads.key(thread)]);
  return known.flatMap((r) => (r.direction === 'in' && r.rawKey ? [r.rawKey] : []));
}

/** Forget that an address bounced or complained (an erasure: the item's key is the address). */
export const forgetUndeliverable = (accountId: string, email: string) => batchDelete([undeliverable.key({ accountId, email: email.toLowerCase() })]);
