/**
 * The attachment resource as the API answers it and its events carry it: what consumers
 * parse and the docs publish, without the request schemas (model.ts, which
 * re-exports these). A consumer's cold start builds these only.
 */
import * as z from '../zod.ts';

export const AttachmentSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed att_'),
    name: z.string(),
    size: z.number().check(z.int()),
    contentType: z.string(),
    url: z.describe(z.optional(z.url()), 'Presigned GET URL, fresh on every read: downloads the bytes with Content-Disposition: attachment and the file name (absent once redacted)'),
    urlExpiresAt: z.describe(z.optional(z.iso.datetime()), 'When url stops working (15 minutes; absent once redacted)'),
    redacted: z.describe(z.optional(z.literal(true)), 'Present and true when the file was redacted (decisions §23): its bytes are deleted, it has no url'),
  }),
  { id: 'Attachment' },
);
export type Attachment = z.infer<typeof AttachmentSchema>;
