import * as z from 'zod';
import { pageParams } from '../pagination/numbered.ts';
import { AttachmentInputSchema, AttachmentSchema, MAX_ATTACHMENTS } from '../attachments/model.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import { CONTROL_CHARACTERS_MESSAGE, textPattern } from '../text.ts';

export const MESSAGE_TYPES = ['request', 'response', 'note'] as const;

/** A cc's display name goes into the mail's header: a name like any other (shared/text.ts), empty allowed. */
const CcSchema = z.object({ email: z.email().max(254), name: z.string().max(128).regex(textPattern(), CONTROL_CHARACTERS_MESSAGE).nullable().optional() }).meta({ id: 'MessageCc' });

export const MESSAGE_CHANNELS = ['api', 'email'] as const;
export const EMAIL_DELIVERY_STATUSES = ['queued', 'sent', 'not_sent', 'bounced', 'complained'] as const;

/** What became of a response's email (decisions §17; docs/email.md). */
export const EmailDeliverySchema = z
  .object({
    status: z
      .enum(EMAIL_DELIVERY_STATUSES)
      .describe(
        'queued: waiting for the sender; sent: handed to the mail service; not_sent: nobody it could go to (no requester, or every address undeliverable); bounced / complained: SES reported a hard bounce or a complaint',
      ),
    to: z.array(z.string()).describe('The addresses it was (or is to be) sent to'),
    cc: z.array(z.string()),
    skipped: z.array(z.string()).describe('Addresses left out because they are marked undeliverable (an earlier hard bounce or complaint)'),
    reason: z.string().nullable(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'EmailDelivery' });
export type EmailDelivery = z.infer<typeof EmailDeliverySchema>;

export const MessageSchema = z
  .object({
    id: z.string().describe('Prefixed msg_'),
    ticketId: z.string(),
    type: z.enum(MESSAGE_TYPES),
    content: z.string().describe('Sanitized HTML'),
    textContent: z.string(),
    authorId: z.string(),
    attachments: z.array(AttachmentSchema).describe('Each with a fresh presigned download URL (15 minutes)'),
    ccs: z.array(CcSchema),
    recipients: z.array(z.string()).describe('Explicit recipients (forwards); empty means the requester'),
    isForward: z.boolean(),
    channel: z.enum(MESSAGE_CHANNELS).describe('How the message came: through the API, or as an inbound mail (decisions §17)'),
    emailDelivery: EmailDeliverySchema.nullable().describe('The email of a response sent with send_email (null for any other message); updated as it is sent, bounces or draws a complaint'),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Message' });
export type Message = z.infer<typeof MessageSchema>;

/** A message as message.created carries it: attachments without download URLs (a URL would expire long before a redelivery). */
export const MessageInEventSchema = MessageSchema.extend({
  attachments: z.array(AttachmentSchema.pick({ id: true, name: true, size: true, contentType: true })),
}).meta({ id: 'MessageInEvent' });
export type MessageInEvent = z.infer<typeof MessageInEventSchema>;

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
