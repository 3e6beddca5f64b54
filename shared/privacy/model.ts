import * as z from 'zod';
import { MAX_ATTACHMENTS } from '../attachments/model.ts';

/** decisions §23: what a redaction takes: a text, attachments of the message, or both. */
export const RedactBodySchema = z
  .object({
    text: z.string().min(1).max(100_000).optional().describe('Every occurrence in the message (content and textContent, as written or HTML-escaped) becomes ▇ repeated to its length'),
    attachmentIds: z
      .array(z.string().min(1).max(64))
      .min(1)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe('Attachments of this message (att_…): each file is deleted and stays listed with redacted: true and no url'),
  })
  .refine((b) => b.text !== undefined || b.attachmentIds !== undefined, { message: 'give text, attachmentIds, or both', path: ['text'] })
  .meta({ id: 'RedactMessageRequest' });
export type RedactInput = z.infer<typeof RedactBodySchema>;

/** decisions §23: closed tickets are deleted this many days after they closed, or kept (null). */
export const RETENTION_MIN_DAYS = 30;
export const RETENTION_MAX_DAYS = 3650;

export const RetentionSchema = z
  .object({
    closedTicketsDeleteAfterDays: z
      .number()
      .int()
      .min(RETENTION_MIN_DAYS)
      .max(RETENTION_MAX_DAYS)
      .nullable()
      .describe(
        `Days (${RETENTION_MIN_DAYS}-${RETENTION_MAX_DAYS}) after which a closed ticket is deleted by the daily sweep, as DELETE /v1/tickets/{id} would (audit via "retention"); null keeps them`,
      ),
  })
  .meta({ id: 'Retention' });
export type Retention = z.infer<typeof RetentionSchema>;

export const RetentionEnvelope = z.object({ retention: RetentionSchema }).meta({ id: 'RetentionResponse' });
export const RetentionBodySchema = z.object({ retention: RetentionSchema }).meta({ id: 'UpdateRetentionRequest' });

export const ContactIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
