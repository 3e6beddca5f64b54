import * as z from '../zod.ts';
import { pageParams } from '../pagination/numbered.ts';
import { AttachmentInputSchema, MAX_ATTACHMENTS } from '../attachments/model.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { CcSchema, MESSAGE_TYPES } from './resource.ts';

export * from './resource.ts';

/** The message create body uses snake_case names (api-spec). */
export const CreateMessageBodySchema = z.meta(
  z.object({
    ticket_id: z.string().check(z.minLength(1), z.maxLength(64)),
    type: z.enum(MESSAGE_TYPES),
    content: z.string().check(z.minLength(1), z.maxLength(100_000)),
    text_content: z.optional(z.string().check(z.maxLength(100_000))),
    recipients: z.optional(z.array(z.email().check(z.maxLength(254))).check(z.maxLength(50))),
    ccs: z.optional(z.array(CcSchema).check(z.maxLength(50))),
    attachments: z.describe(
      z.optional(z.array(AttachmentInputSchema).check(z.maxLength(MAX_ATTACHMENTS))),
      'Upload tokens (POST /uploads), each used once; a refused token is 422 naming attachments.N.token and nothing is written',
    ),
    send_email: z._default(z.boolean(), true),
    is_forward: z._default(z.boolean(), false),
    ticket_update: z.describe(
      z.optional(z.object({ status: z.optional(z.enum(TICKET_STATUSES)), priority: z.optional(z.enum(TICKET_PRIORITIES)), type: z.optional(z.enum(TICKET_TYPES)) })),
      'Applied to the ticket in the same transaction as the message, or neither happens',
    ),
  }),
  { id: 'CreateMessageRequest' },
);
export type CreateMessageInput = z.infer<typeof CreateMessageBodySchema>;

export const ListMessagesQuerySchema = z.object({
  ticket_id: z.string().check(z.minLength(1), z.maxLength(64)),
  sort_order: z._default(z.enum(['asc', 'desc']), 'asc'),
  ...pageParams(50),
});
export type ListMessagesQuery = z.infer<typeof ListMessagesQuerySchema>;

export const MessageParamsSchema = z.object({ messageId: z.string().check(z.minLength(1), z.maxLength(64)) });
