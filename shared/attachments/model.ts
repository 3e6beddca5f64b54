import * as z from 'zod';
import { CONTROL_CHARACTER, textPattern } from '../text.ts';

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
 * A file name as decisions §14 allows it: 1-255 characters, no `/`, `\`, control
 * characters, bidirectional controls or lone surrogates (shared/text.ts, the
 * rule every name follows).
 */
export const FileNameSchema = z
  .string()
  .min(1)
  .max(255)
  .regex(textPattern('/\\\\'), 'no "/", "\\", control characters, bidirectional controls (such as U+202E) or lone surrogates')
  .describe('The file name shown and offered on download: 1-255 characters, no "/", "\\", control characters, bidirectional controls or lone surrogates');

/** `type/subtype` with optional parameters (RFC 9110 tokens): the value is signed into the upload URL, so it must be a valid header value. */
export const ContentTypeSchema = z
  .string()
  .min(3)
  .max(255)
  .regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=([A-Za-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/, 'a MIME type such as image/png')
  .describe('MIME type, e.g. image/png; the upload must be sent with exactly this Content-Type');

export const CreateUploadBodySchema = z
  .object({
    name: FileNameSchema,
    size: z.number().int().min(1).max(MAX_UPLOAD_BYTES).describe('Exact size of the file in bytes (1..26,214,400); the upload must have exactly this length'),
    contentType: ContentTypeSchema,
  })
  .meta({ id: 'CreateUploadRequest' });
export type CreateUploadInput = z.infer<typeof CreateUploadBodySchema>;

export const UploadSchema = z
  .object({
    token: z.string().describe('upl_…: attach it to one message (POST /messages attachments[].token) within 24 hours, once, in this account'),
    name: z.string(),
    size: z.number().int(),
    contentType: z.string(),
    uploadUrl: z.url().describe('S3 presigned URL: PUT the bytes here with exactly uploadHeaders, before expiresAt'),
    uploadMethod: z.literal('PUT'),
    uploadHeaders: z.record(z.string(), z.string()).describe('Headers the PUT must carry, exactly (they are signed into uploadUrl); the body must be exactly size bytes'),
    expiresAt: z.iso.datetime().describe('When uploadUrl stops working (15 minutes)'),
    tokenExpiresAt: z.iso.datetime().describe('Until when the token can be attached (24 hours)'),
  })
  .meta({ id: 'Upload' });
export type Upload = z.infer<typeof UploadSchema>;

export const AttachmentSchema = z
  .object({
    id: z.string().describe('Prefixed att_'),
    name: z.string(),
    size: z.number().int(),
    contentType: z.string(),
    url: z.url().optional().describe('Presigned GET URL, fresh on every read: downloads the bytes with Content-Disposition: attachment and the file name (absent once redacted)'),
    urlExpiresAt: z.iso.datetime().optional().describe('When url stops working (15 minutes; absent once redacted)'),
    redacted: z.literal(true).optional().describe('Present and true when the file was redacted (decisions §23): its bytes are deleted, it has no url'),
  })
  .meta({ id: 'Attachment' });
export type Attachment = z.infer<typeof AttachmentSchema>;

/** An attachment as a message stores it (and its event carries it, without the key): the URL is made on every read. */
export interface StoredAttachment {
  id: string;
  name: string;
  size: number;
  contentType: string;
  key: string;
  /** The file was redacted (decisions §23): its object is deleted, the entry stays listed without a URL. */
  redacted?: true;
}

/** One entry of POST /messages `attachments`: the token, and optionally the name and size the client expects it to have. */
export const AttachmentInputSchema = z
  .object({
    token: z.string().min(1).max(64).describe('An upload token (upl_…) of this account, uploaded and not used yet'),
    name: FileNameSchema.optional().describe("If given, must equal the upload's name (a file name as uploads take it)"),
    size: z.number().int().min(1).max(MAX_UPLOAD_BYTES).optional().describe("If given, must equal the upload's size"),
  })
  .meta({ id: 'MessageAttachmentInput' });
export type AttachmentInput = z.infer<typeof AttachmentInputSchema>;

export const AttachmentParamsSchema = z.object({ attachmentId: z.string().min(1).max(64) });

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
