import * as z from '../zod.ts';
import { textPattern } from '../text.ts';
import { MAX_UPLOAD_BYTES } from './keys.ts';

export * from './resource.ts';

export * from './keys.ts';

/**
 * A file name as decisions §14 allows it: 1-255 characters, no `/`, `\`, control
 * characters, bidirectional controls or lone surrogates (shared/text.ts, the
 * rule every name follows).
 */
export const FileNameSchema = z.describe(
  z.string().check(z.minLength(1), z.maxLength(255), z.regex(textPattern('/\\\\'), 'no "/", "\\", control characters, bidirectional controls (such as U+202E) or lone surrogates')),
  'The file name shown and offered on download: 1-255 characters, no "/", "\\", control characters, bidirectional controls or lone surrogates',
);

/** `type/subtype` with optional parameters (RFC 9110 tokens): the value is signed into the upload URL, so it must be a valid header value. */
export const ContentTypeSchema = z.describe(
  z
    .string()
    .check(
      z.minLength(3),
      z.maxLength(255),
      z.regex(/^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*(\s*;\s*[A-Za-z0-9!#$&^_.+-]+=([A-Za-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/, 'a MIME type such as image/png'),
    ),
  'MIME type, e.g. image/png; the upload must be sent with exactly this Content-Type',
);

export const CreateUploadBodySchema = z.meta(
  z.object({
    name: FileNameSchema,
    size: z.describe(z.number().check(z.int(), z.gte(1), z.lte(MAX_UPLOAD_BYTES)), 'Exact size of the file in bytes (1..26,214,400); the upload must have exactly this length'),
    contentType: ContentTypeSchema,
  }),
  { id: 'CreateUploadRequest' },
);
export type CreateUploadInput = z.infer<typeof CreateUploadBodySchema>;

export const UploadSchema = z.meta(
  z.object({
    token: z.describe(z.string(), 'upl_…: attach it to one message (POST /messages attachments[].token) within 24 hours, once, in this account'),
    name: z.string(),
    size: z.number().check(z.int()),
    contentType: z.string(),
    uploadUrl: z.describe(z.url(), 'S3 presigned URL: PUT the bytes here with exactly uploadHeaders, before expiresAt'),
    uploadMethod: z.literal('PUT'),
    uploadHeaders: z.describe(z.record(z.string(), z.string()), 'Headers the PUT must carry, exactly (they are signed into uploadUrl); the body must be exactly size bytes'),
    expiresAt: z.describe(z.iso.datetime(), 'When uploadUrl stops working (15 minutes)'),
    tokenExpiresAt: z.describe(z.iso.datetime(), 'Until when the token can be attached (24 hours)'),
  }),
  { id: 'Upload' },
);
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
export const AttachmentInputSchema = z.meta(
  z.object({
    token: z.describe(z.string().check(z.minLength(1), z.maxLength(64)), 'An upload token (upl_…) of this account, uploaded and not used yet'),
    name: z.describe(z.optional(FileNameSchema), "If given, must equal the upload's name (a file name as uploads take it)"),
    size: z.describe(z.optional(z.number().check(z.int(), z.gte(1), z.lte(MAX_UPLOAD_BYTES))), "If given, must equal the upload's size"),
  }),
  { id: 'MessageAttachmentInput' },
);
export type AttachmentInput = z.infer<typeof AttachmentInputSchema>;

export const AttachmentParamsSchema = z.object({ attachmentId: z.string().check(z.minLength(1), z.maxLength(64)) });
