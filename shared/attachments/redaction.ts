import type { TxWrite } from '../db/transact.ts';
import { ATTACHMENT_PREFIX, idSuffix } from './keys.ts';
import type { StoredAttachment } from './model.ts';
import { attachmentDeleteWrite, redactedWrite } from './repository.ts';

/**
 * The attachment records' writes of privacy (decisions §23), for the
 * transaction of a redaction or an erasure; the objects are deleted after it
 * commits (privacy.ts).
 */

const suffixOf = (a: Pick<StoredAttachment, 'id'>) => idSuffix(a.id, ATTACHMENT_PREFIX);

/** The writes that mark these attachments redacted, for the redaction's transaction. */
export const redactAttachmentWrites = (accountId: string, attachments: readonly Pick<StoredAttachment, 'id'>[]): TxWrite[] =>
  attachments.flatMap((a) => {
    const id = suffixOf(a);
    return id ? [redactedWrite(accountId, id)] : [];
  });

/** The writes that delete these attachments' records, for an erasure's transaction. */
export const deleteAttachmentWrites = (accountId: string, attachments: readonly Pick<StoredAttachment, 'id'>[]): TxWrite[] =>
  attachments.flatMap((a) => {
    const id = suffixOf(a);
    return id ? [attachmentDeleteWrite(accountId, id)] : [];
  });
