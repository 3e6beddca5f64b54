/**
 * The attachment limits, ids, object keys and download header that code
 * without the request schemas needs (services, the mail channel, privacy
 * jobs, clean-up). Kept apart from model.ts: importing them must not build the
 * API schemas at a cold start (model.ts re-exports them).
 */
import { CONTROL_CHARACTER } from '../text.ts';

/** decisions §14: one upload is at most 25 MiB, a message carries at most 20 attachments. */
export const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
export const MAX_ATTACHMENTS = 20;
/** How long a presigned URL (upload or download) works. */
export const URL_TTL_SECONDS = 15 * 60;
/** How long a token can be attached. */
export const TOKEN_TTL_SECONDS = 24 * 60 * 60;

/** Tokens are `upl_` + the upload's id; the attachment it becomes is `att_` + the same id. */
export const UPLOAD_PREFIX = 'upl_';
export const ATTACHMENT_PREFIX = 'att_';
const ID_SUFFIX = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** The id suffix of a token or attachment id, or undefined when it cannot be one. */
export const idSuffix = (value: string, prefix: string): string | undefined => {
  const suffix = value.startsWith(prefix) ? value.slice(prefix.length) : '';
  return ID_SUFFIX.test(suffix) ? suffix : undefined;
};

/**
 * Object keys carry the account and an unguessable id. Uploads wait under
 * `uploads/` (a lifecycle rule deletes them after a day); an attached upload
 * is copied under its ticket, so deleting the ticket deletes one prefix and
 * nothing a message points at is ever under the expiring one.
 */
export const objectKeys = {
  upload: (accountId: string, uploadId: string) => `uploads/${accountId}/${uploadId}`,
  uploadPrefix: 'uploads/',
  ticketPrefix: (accountId: string, ticketId: string) => `attachments/${accountId}/${ticketId}/`,
  /** `copy` is unique per attaching request, so a request that loses a race deletes only its own copy. */
  attachment: (accountId: string, ticketId: string, uploadId: string, copy: string) => `attachments/${accountId}/${ticketId}/${uploadId}.${copy}`,
  attachmentPrefix: 'attachments/',
  /** A person's data (decisions §23), one document per job; a lifecycle rule deletes it after a day. */
  exportPrefix: 'exports/',
  exportDocument: (accountId: string, jobId: string) => `exports/${accountId}/${jobId}.json`,
};

/**
 * The Content-Disposition stored with the object (signed into the upload) and
 * asked for on every download: always `attachment`, so an HTML or SVG file is
 * saved, never rendered; `filename` is an ASCII fallback, `filename*` the
 * exact name (RFC 6266 / RFC 8187).
 */
export function contentDisposition(name: string): string {
  // Whatever string reaches here (one stored before a rule changed included) builds a header: control characters,
  // bidirectional controls and lone surrogates become "_", so encodeURIComponent (which throws on a lone surrogate) cannot throw.
  const shown = name.replace(CONTROL_CHARACTER, '_');
  const fallback = shown.replace(/[^\x20-\x7e]|["\\%;]/g, '_');
  const exact = encodeURIComponent(shown).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${exact}`;
}
