import * as z from 'zod';
import { textPattern } from '../text.ts';
import { MAX_UPLOAD_BYTES } from './keys.ts';

export * from './resource.ts';

export * from './keys.ts';

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
