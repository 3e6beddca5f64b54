import { bindEntity, conditions } from '../db/entity.ts';
import { attachmentEntities } from '../db/entities/attachments.ts';
import type { Key } from '../db/query.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { writeNow, type TxWrite } from '../db/transact.ts';

/**
 * An upload item: pending (with a TTL, so a token never attached disappears
 * from the table) until one message attaches it; then the same item is the
 * attachment (no TTL), found by the attachment id, which shares its suffix.
 */
export interface UploadRecord {
  accountId: string;
  /** The id suffix shared by the token (upl_) and the attachment (att_). */
  id: string;
  name: string;
  size: number;
  contentType: string;
  state: 'pending' | 'attached';
  /** Where the client uploads the bytes (uploads/… prefix, expired by the bucket's lifecycle rule). */
  uploadKey: string;
  createdBy: string;
  createdAt: string;
  /** Epoch seconds after which the token cannot be attached (the table's TTL attribute while pending). */
  expiresAt?: number;
  /** Once attached: the message, its ticket and the attachment's own object (attachments/… prefix). */
  messageId?: string;
  ticketId?: string;
  objectKey?: string;
  attachedAt?: string;
  /** The file was redacted (decisions §23): its object is deleted. */
  redacted?: boolean;
}

const uploads = bindEntity<UploadRecord>(attachmentEntities.upload, {
  fields: ['accountId', 'id', 'name', 'size', 'contentType', 'state', 'uploadKey', 'createdBy', 'createdAt', 'expiresAt', 'messageId', 'ticketId', 'objectKey', 'attachedAt', 'redacted'],
  // A pending upload has no attachment facts yet, an attached one no TTL: absent, not null.
  normalize: (u) => Object.fromEntries(Object.entries(u).filter(([, v]) => v !== null)) as unknown as UploadRecord,
});

export async function putUpload(u: UploadRecord): Promise<void> {
  await writeNow(uploads.put(u, conditions.absent()));
}

/** One upload or attachment by its id suffix (strongly consistent: a token used a moment ago reads as used). */
export async function getUpload(accountId: string, id: string): Promise<UploadRecord | null> {
  return uploads.get({ accountId, id }, { consistent: true });
}

/** Several uploads of one account by id suffix, in one BatchGetItem; missing ones are absent from the map. */
export async function getUploads(accountId: string, ids: readonly string[]): Promise<Map<string, UploadRecord>> {
  if (!ids.length) return new Map();
  const found = await uploads.getMany(
    ids.map((id) => ({ accountId, id })),
    { consistent: true },
  );
  return new Map(found.map((u) => [u.id, u]));
}

/** The key of an attachment's record by its id suffix (a deleted ticket's attachments are removed with its messages). */
export const attachmentKey = (accountId: string, id: string): Key => uploads.key({ accountId, id });

/**
 * The record of an attachment the service stored itself (an inbound mail's):
 * the same item an attached upload becomes, so GET /attachments/:id, the
 * message's URLs and the ticket's clean-up treat both alike.
 */
export const storedAttachmentWrite = (u: UploadRecord): TxWrite => uploads.put(u, conditions.absent());

/**
 * The write that consumes a token in a message's transaction: only a pending,
 * unexpired upload of this account becomes this message's attachment, so of
 * two messages racing for one token exactly one commits.
 */
export function attachWrite(u: UploadRecord, at: { messageId: string; ticketId: string; objectKey: string; now: string }, onConditionFailed: () => Error): TxWrite {
  return uploads.updateAttributes(
    u,
    { set: { state: 'attached', messageId: at.messageId, ticketId: at.ticketId, objectKey: at.objectKey, attachedAt: at.now }, remove: [TTL_ATTRIBUTE] },
    {
      expr: '#state = :pending AND #ttl > :nowSeconds',
      names: { '#state': 'state', '#ttl': TTL_ATTRIBUTE },
      values: { ':pending': 'pending', ':nowSeconds': Math.floor(Date.parse(at.now) / 1000) },
      error: onConditionFailed,
    },
  );
}

/** The write that records an attachment's new ticket and object (its message moved there: a merge, decisions §20); only an attached record. */
export const attachmentMovedWrite = (accountId: string, id: string, at: { ticketId: string; objectKey: string }): TxWrite =>
  uploads.updateAttributes(
    { accountId, id },
    { set: { ticketId: at.ticketId, objectKey: at.objectKey } },
    { expr: '#state = :attached', names: { '#state': 'state' }, values: { ':attached': 'attached' } },
  );

/** The write that marks an attachment redacted (decisions §23), for the redaction's transaction; its object is deleted after it commits. */
export const redactedWrite = (accountId: string, id: string): TxWrite => uploads.updateAttributes({ accountId, id }, { set: { redacted: true } }, conditions.present());

/** The write that deletes an attachment's record (an erased contact's file, decisions §23), for the erasure's transaction. */
export const attachmentDeleteWrite = (accountId: string, id: string): TxWrite => uploads.delete({ accountId, id });
