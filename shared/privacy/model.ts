import * as z from '../zod.ts';
import { MAX_ATTACHMENTS } from '../attachments/model.ts';

/** decisions §23: what a redaction takes: a text, attachments of the message, or both. */
export const RedactBodySchema = z.meta(
  z
    .object({
      text: z.describe(
        z.optional(z.string().check(z.minLength(1), z.maxLength(100_000))),
        'Every occurrence in the message (content and textContent, as written or HTML-escaped) becomes ▇ repeated to its length',
      ),
      attachmentIds: z.describe(
        z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.minLength(1), z.maxLength(MAX_ATTACHMENTS))),
        'Attachments of this message (att_…): each file is deleted and stays listed with redacted: true and no url',
      ),
    })
    .check(z.refine((b) => b.text !== undefined || b.attachmentIds !== undefined, { message: 'give text, attachmentIds, or both', path: ['text'] })),
  { id: 'RedactMessageRequest' },
);
export type RedactInput = z.infer<typeof RedactBodySchema>;

/** decisions §23: closed tickets are deleted this many days after they closed, or kept (null). */
export const RETENTION_MIN_DAYS = 30;
export const RETENTION_MAX_DAYS = 3650;

export const RetentionSchema = z.meta(
  z.object({
    closedTicketsDeleteAfterDays: z.describe(
      z.nullable(z.number().check(z.int(), z.gte(RETENTION_MIN_DAYS), z.lte(RETENTION_MAX_DAYS))),
      `Days (${RETENTION_MIN_DAYS}-${RETENTION_MAX_DAYS}) after which a closed ticket is deleted by the daily sweep, as DELETE /v1/tickets/{id} would (audit via "retention"); null keeps them`,
    ),
  }),
  { id: 'Retention' },
);
export type Retention = z.infer<typeof RetentionSchema>;

export const RetentionEnvelope = z.meta(z.object({ retention: RetentionSchema }), { id: 'RetentionResponse' });
export const RetentionBodySchema = z.meta(z.object({ retention: RetentionSchema }), { id: 'UpdateRetentionRequest' });

export const ContactIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
