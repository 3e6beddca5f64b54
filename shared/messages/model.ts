import * as z from 'zod';
import { pageParams } from '../pagination/numbered.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../tickets/model.ts';

export const MESSAGE_TYPES = ['request', 'response', 'note'] as const;

const AttachmentSchema = z
  .object({
    token: z.string().min(1).max(512),
    name: z.string().min(1).max(255),
    size: z
      .number()
      .int()
      .min(0)
      .max(50 * 1024 * 1024),
  })
  .meta({ id: 'MessageAttachment' });
const CcSchema = z.object({ email: z.email().max(254), name: z.string().max(128).nullable().optional() }).meta({ id: 'MessageCc' });

export const MessageSchema = z
  .object({
    id: z.string().describe('Prefixed msg_'),
    ticketId: z.string(),
    type: z.enum(MESSAGE_TYPES),
    content: z.string().describe('Sanitized HTML'),
    textContent: z.string(),
    authorId: z.string(),
    attachments: z.array(AttachmentSchema),
    ccs: z.array(CcSchema),
    recipients: z.array(z.string()).describe('Explicit recipients (forwards); empty means the requester'),
    isForward: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Message' });
export type Message = z.infer<typeof MessageSchema>;

/** The message create body uses snake_case names (api-spec). */
export const CreateMessageBodySchema = z
  .object({
    ticket_id: z.string().min(1).max(64),
    type: z.enum(MESSAGE_TYPES),
    content: z.string().min(1).max(100_000),
    text_content: z.string().max(100_000).optional(),
    recipients: z.array(z.email().max(254)).max(50).optional(),
    ccs: z.array(CcSchema).max(50).optional(),
    attachments: z.array(AttachmentSchema).max(50).optional(),
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
