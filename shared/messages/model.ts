import * as z from 'zod';
import { pageParams } from '../pagination/numbered.ts';
import { AttachmentInputSchema, MAX_ATTACHMENTS } from '../attachments/model.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { CcSchema, MESSAGE_TYPES } from './resource.ts';

export * from './resource.ts';

/** The message create body uses snake_case names (api-spec). */
export const CreateMessageBodySchema = z
  .object({
    ticket_id: z.string().min(1).max(64),
    type: z.enum(MESSAGE_TYPES),
    content: z.string().min(1).max(100_000),
    text_content: z.string().max(100_000).optional(),
    recipients: z.array(z.email().max(254)).max(50).optional(),
    ccs: z.array(CcSchema).max(50).optional(),
    attachments: z
      .array(AttachmentInputSchema)
      .max(MAX_ATTACHMENTS)
      .optional()
      .describe('Upload tokens (POST /uploads), each used once; a refused token is 422 naming attachments.N.token and nothing is written'),
    send_email: z.boolean().default(true),
    is_forward: z.boolean().default(false),
    ticket_update: z
      .object({ status: z.enum(TICKET_STATUSES).optional(), priority: z.enum(TICKET_PRIORITIES).optional(), type: z.enum(TICKET_TYPES).optional() })
      .optional()
      .describe('Applied to the ticket in the same transaction as the message, or neither happens'),
  })
  .meta({ id: 'CreateMessageRequest' });
export type CreateMessageInput = z.infer<typeof CreateMessageBodySchema>;

export const ListMessagesQuerySchema = z.object({
  ticket_id: z.string().min(1).max(64),
  sort_order: z.enum(['asc', 'desc']).default('asc'),
  ...pageParams(50),
});
export type ListMessagesQuery = z.infer<typeof ListMessagesQuerySchema>;

export const MessageParamsSchema = z.object({ messageId: z.string().min(1).max(64) });
