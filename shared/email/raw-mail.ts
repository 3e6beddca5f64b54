import type { Principal } from '../auth/principal.ts';
import { NotFoundError } from '../domain/errors.ts';
import { RawAnswer } from '../http/contract.ts';
import { getMessageRecord } from '../messages/api.ts';

/** The object module loads at the first request for a raw mail, not at the messages function's cold start. */
const objects = () => import('../attachments/objects.ts');

/** A Lambda answer holds 6 MB; base64 makes 4 of 3 bytes, so a larger mail is a redirect to the bucket (a presigned GET, 15 minutes). */
const INLINE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * A message's mail as it was received (decisions §24): the raw object the
 * receipt rule stored under `inbound/`, kept 30 days (docs/email.md). A
 * message not made from mail, or whose mail is no longer kept, is not found.
 */
export async function rawMailOf(p: Pick<Principal, 'accountId'>, messageId: string): Promise<RawAnswer> {
  const m = await getMessageRecord(p.accountId, messageId);
  if (!m) throw new NotFoundError('Message');
  if (!m.rawMail) throw new NotFoundError('Raw mail of this message (it was not received by mail)');
  const { readObject, storedSize, presignDownload } = await objects();
  const size = await storedSize(m.rawMail);
  if (size === undefined) throw new NotFoundError('Raw mail of this message (kept 30 days after it was received)');
  if (size > INLINE_MAX_BYTES) return new RawAnswer('message/rfc822', null, await presignDownload(m.rawMail));
  return new RawAnswer('message/rfc822', await readObject(m.rawMail));
}
