import type { Principal } from '../auth/principal.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { newId, randomBase62 } from '../ids.ts';
import { logger } from '../logger.ts';
import { ATTACHMENT_PREFIX, idSuffix, objectKeys, TOKEN_TTL_SECONDS, UPLOAD_PREFIX, URL_TTL_SECONDS } from './keys.ts';
import type { Attachment, AttachmentInput, CreateUploadInput, StoredAttachment, Upload } from './model.ts';
import * as repo from './repository.ts';
import type { UploadRecord } from './repository.ts';
import { objectStoreSettings } from './settings.ts';

// Read at cold start as ever (a function missing the bucket fails at init), though the client loads later.
objectStoreSettings();

/**
 * The S3 client, its presigner and the object calls (~130 KB minified) load
 * on the first call that touches an object, from their own chunk
 * (infra/bundling.ts): a message without attachments, or a list of them,
 * never needs them.
 */
const objects = () => import('./objects.ts');

const inSeconds = (seconds: number, from = Date.now()) => new Date(from + seconds * 1000).toISOString();

/**
 * POST /uploads: a token and a presigned PUT, valid 15 minutes. The bytes go
 * from the client straight to S3; the upload is an item that expires (TTL)
 * if no message attaches it within 24 hours.
 */
export async function createUpload(p: Principal, input: CreateUploadInput): Promise<Upload> {
  const now = Date.now();
  const id = newId('upl', now).slice(UPLOAD_PREFIX.length);
  const uploadKey = objectKeys.upload(p.accountId, id);
  const { presignUpload, uploadHeaders } = await objects();
  const uploadUrl = await presignUpload(uploadKey, input.name, input.size, input.contentType);
  const record: UploadRecord = {
    accountId: p.accountId,
    id,
    name: input.name,
    size: input.size,
    contentType: input.contentType,
    state: 'pending',
    uploadKey,
    createdBy: p.userId,
    createdAt: new Date(now).toISOString(),
    expiresAt: Math.floor(now / 1000) + TOKEN_TTL_SECONDS,
  };
  await repo.putUpload(record);
  return {
    token: `${UPLOAD_PREFIX}${id}`,
    name: input.name,
    size: input.size,
    contentType: input.contentType,
    uploadUrl,
    uploadMethod: 'PUT',
    uploadHeaders: uploadHeaders(input.name, input.contentType),
    expiresAt: inSeconds(URL_TTL_SECONDS, now),
    tokenExpiresAt: inSeconds(TOKEN_TTL_SECONDS, now),
  };
}

/** An attachment as the API answers it: its stored facts and a fresh download URL (no S3 request: the URL is signed locally). */
export async function toAttachmentDto(a: StoredAttachment): Promise<Attachment> {
  if (a.redacted) return { id: a.id, name: a.name, size: a.size, contentType: a.contentType, redacted: true };
  const { presignDownload } = await objects();
  return { id: a.id, name: a.name, size: a.size, contentType: a.contentType, url: await presignDownload(a.key), urlExpiresAt: inSeconds(URL_TTL_SECONDS) };
}

const stored = (u: UploadRecord): StoredAttachment => ({
  id: `${ATTACHMENT_PREFIX}${u.id}`,
  name: u.name,
  size: u.size,
  contentType: u.contentType,
  key: u.objectKey!,
  ...(u.redacted ? { redacted: true as const } : {}),
});

/** GET /attachments/:id: an attachment of the caller's account (another account's id is simply not found). */
export async function getAttachment(p: Principal, attachmentId: string): Promise<Attachment> {
  const id = idSuffix(attachmentId, ATTACHMENT_PREFIX);
  const u = id ? await repo.getUpload(p.accountId, id) : null;
  if (!u || u.state !== 'attached') throw new NotFoundError('Attachment');
  return toAttachmentDto(stored(u));
}

/** What a message needs to attach its uploads: the attachments it stores, the token-consuming writes of its transaction, and the undo of a failed attempt. */
export interface PreparedAttachments {
  attachments: StoredAttachment[];
  writes(messageId: string, now: string): TxWrite[];
  /** Delete this request's copies (the message was not written); best effort, as a crash here leaves only an unreachable object under the ticket. */
  discard(): Promise<void>;
}

const refused = (issues: FieldIssue[]) => new ValidationError(`Invalid request: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);

/**
 * Check each token of a new message (decisions §14) and copy its object
 * under the ticket. A token must be an upload of the caller's account, not
 * attached yet, not expired, and its object must exist with the declared size
 * (HeadObject; and tagged clean where uploads are scanned for malware). Any
 * refusal is a 422 naming `attachments.N.token` before anything is written.
 * The copies are made before the message's transaction, which consumes the
 * tokens: whatever happens, a committed message's objects exist, and nothing
 * a message points at is under the prefix that expires.
 */
export async function prepareAttachments(p: Principal, ticketId: string, items: readonly AttachmentInput[]): Promise<PreparedAttachments> {
  const issues: FieldIssue[] = [];
  const issue = (i: number, message: string, field = 'token') => issues.push({ field: `attachments.${i}.${field}`, message });
  const ids = items.map((item) => idSuffix(item.token, UPLOAD_PREFIX));
  const uploads = await repo.getUploads(
    p.accountId,
    ids.filter((id): id is string => Boolean(id)),
  );
  const nowSeconds = Date.now() / 1000;
  const seen = new Set<string>();
  items.forEach((item, i) => {
    const id = ids[i];
    const u = id ? uploads.get(id) : undefined;
    if (!id || !u) return issue(i, 'no upload with this token in this account');
    if (seen.has(id)) return issue(i, 'the same token is listed twice');
    seen.add(id);
    if (u.state !== 'pending') return issue(i, 'this upload is already attached to a message; a token can be used once');
    if ((u.expiresAt ?? 0) <= nowSeconds) return issue(i, 'this token has expired (24 hours); upload the file again');
    if (item.name !== undefined && item.name !== u.name) issue(i, `does not match the upload's name`, 'name');
    if (item.size !== undefined && item.size !== u.size) issue(i, `does not match the upload's size (${u.size} bytes)`, 'size');
  });
  if (issues.length) throw refused(issues);

  const records = ids.map((id) => uploads.get(id!)!);
  const { copyObject, deleteObjects, isMissingObject, scanStatus, SCAN_CLEAN, storedSize } = await objects();
  // Never the client's word: what S3 holds, and (where uploads are scanned) GuardDuty's verdict.
  const checks = await Promise.all(records.map(async (u) => ({ size: await storedSize(u.uploadKey), scan: await scanStatus(u.uploadKey) })));
  checks.forEach(({ size, scan }, i) => {
    const u = records[i];
    if (size === undefined) return issue(i, 'nothing has been uploaded for this token yet (PUT the file to uploadUrl first)');
    if (size !== u.size) return issue(i, `the uploaded file has ${size} bytes, not the ${u.size} declared`);
    if (scan === undefined) return issue(i, 'the upload has not been scanned for malware yet; retry in a few seconds');
    if (scan !== SCAN_CLEAN) return issue(i, `the upload did not pass the malware scan (${scan})`);
  });
  if (issues.length) throw refused(issues);

  const copy = randomBase62(12);
  const keys = records.map((u) => objectKeys.attachment(p.accountId, ticketId, u.id, copy));
  const copied = await Promise.allSettled(records.map((u, i) => copyObject(u.uploadKey, keys[i], u.name, u.contentType)));
  const discard = async () => {
    try {
      await deleteObjects(keys);
    } catch (err) {
      logger.warn('attachments: could not delete the copies of a message that was not written', { keys, err });
    }
  };
  const failed = copied.findIndex((c) => c.status === 'rejected');
  if (failed >= 0) {
    await discard();
    const reason = (copied[failed] as PromiseRejectedResult).reason;
    // Gone between the check and the copy (the day-old upload met the lifecycle rule): the caller's 422, not our 500.
    if (isMissingObject(reason)) throw refused([{ field: `attachments.${failed}.token`, message: 'this upload has expired; upload the file again' }]);
    throw reason;
  }
  const attachments = records.map((u, i) => stored({ ...u, objectKey: keys[i] }));
  return {
    attachments,
    writes: (messageId, now) =>
      records.map((u, i) =>
        repo.attachWrite(u, { messageId, ticketId, objectKey: keys[i], now }, () =>
          refused([{ field: `attachments.${i}.token`, message: 'this upload was attached to another message meanwhile, or expired; a token can be used once' }]),
        ),
      ),
    discard,
  };
}

/** A file the service received itself: an inbound mail's attachment or inline image (decisions §17). */
export interface ReceivedFile {
  name: string;
  contentType: string;
  bytes: Uint8Array;
}

/**
 * Store received files as a message's attachments: each object written under
 * the ticket (the key a copied upload gets), and the records of the
 * message's transaction. As with uploads, the objects exist before the
 * message commits; `discard` removes them if it does not.
 */
export async function storeReceivedFiles(accountId: string, ticketId: string, files: readonly ReceivedFile[]): Promise<PreparedAttachments> {
  const { deleteObjects, putObject } = await objects();
  const copy = randomBase62(12);
  const records = files.map((f) => {
    const id = newId('upl').slice(UPLOAD_PREFIX.length);
    return { file: f, id, key: objectKeys.attachment(accountId, ticketId, id, copy) };
  });
  const discard = async () => {
    try {
      await deleteObjects(records.map((r) => r.key));
    } catch (err) {
      logger.warn('attachments: could not delete the objects of a mail that was not recorded', { err });
    }
  };
  const stored = await Promise.allSettled(records.map((r) => putObject(r.key, r.file.bytes, r.file.name, r.file.contentType)));
  const failed = stored.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await discard();
    throw failed.reason;
  }
  return {
    attachments: records.map((r) => ({ id: `${ATTACHMENT_PREFIX}${r.id}`, name: r.file.name, size: r.file.bytes.byteLength, contentType: r.file.contentType, key: r.key })),
    writes: (messageId, now) =>
      records.map((r) =>
        repo.storedAttachmentWrite({
          accountId,
          id: r.id,
          name: r.file.name,
          size: r.file.bytes.byteLength,
          contentType: r.file.contentType,
          state: 'attached',
          uploadKey: r.key,
          createdBy: 'email',
          createdAt: now,
          messageId,
          ticketId,
          objectKey: r.key,
          attachedAt: now,
        }),
      ),
    discard,
  };
}

/** Attachments of messages that move to another ticket: what the messages then store, the records' writes, and the old objects' removal. */
export interface MovedAttachments {
  /** Each message's attachments with their keys under the new ticket, by message id. */
  byMessage: Map<string, StoredAttachment[]>;
  /** The records' new ticket and key, for the move's transaction. */
  writes: TxWrite[];
  /** Delete the objects under the old ticket once the move committed (best effort: a leftover goes with the old ticket's prefix). */
  discardOld(): Promise<void>;
}

/**
 * Move the attachments of messages to another ticket (a merge, decisions
 * §20): each object is copied under the new ticket's prefix, keeping its
 * file name there, so a second attempt copies onto the same key and the
 * objects never depend on the old ticket (whose deletion deletes its prefix).
 * The copies exist before the move commits; an entry stored before uploads
 * existed (no key) or whose object is gone keeps what it had.
 */
export async function moveAttachments(accountId: string, to: string, messages: readonly { id: string; attachments: readonly StoredAttachment[] }[]): Promise<MovedAttachments> {
  const all = messages.flatMap((m) => m.attachments.filter((a) => a.key));
  if (!all.length) return { byMessage: new Map(messages.map((m) => [m.id, [...m.attachments]])), writes: [], discardOld: async () => undefined };
  const { copyObject, deleteObjects, isMissingObject } = await objects();
  const prefix = objectKeys.ticketPrefix(accountId, to);
  const newKey = (a: StoredAttachment) => (a.key.startsWith(prefix) ? a.key : `${prefix}${a.key.slice(a.key.lastIndexOf('/') + 1)}`);
  const suffixes = all.map((a) => idSuffix(a.id, ATTACHMENT_PREFIX)).filter((id): id is string => Boolean(id));
  const records = await repo.getUploads(accountId, suffixes);
  const moved = new Map<string, string>();
  await Promise.all(
    all.map(async (a) => {
      const key = newKey(a);
      if (key === a.key) return;
      try {
        await copyObject(a.key, key, a.name, a.contentType);
        moved.set(a.key, key);
      } catch (err) {
        if (!isMissingObject(err)) throw err;
        logger.warn('attachments: the object of a moved message is missing; its entry keeps its key', { accountId, key: a.key });
      }
    }),
  );
  const writes = all.flatMap((a) => {
    const id = idSuffix(a.id, ATTACHMENT_PREFIX);
    const key = moved.get(a.key);
    return id && key && records.get(id)?.state === 'attached' ? [repo.attachmentMovedWrite(accountId, id, { ticketId: to, objectKey: key })] : [];
  });
  return {
    byMessage: new Map(messages.map((m) => [m.id, m.attachments.map((a) => ({ ...a, key: moved.get(a.key) ?? a.key }))])),
    writes,
    discardOld: async () => {
      try {
        await deleteObjects([...moved.keys()]);
      } catch (err) {
        logger.warn('attachments: could not delete the objects of moved messages under their old ticket', { accountId, err });
      }
    },
  };
}
