/**
 * The attachment resource as the API answers it and its events carry it: what consumers
 * parse and the docs publish, without the request schemas (model.ts, which
 * re-exports these). A consumer's cold start builds these only.
 */
import * as z from 'zod';

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
