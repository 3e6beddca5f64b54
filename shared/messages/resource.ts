/**
 * The message resource as the API answers it and its events carry it: what consumers
 * parse and the docs publish, without the request schemas (model.ts, which
 * re-exports these). A consumer's cold start builds these only.
 */
import * as z from 'zod';
import { AttachmentSchema } from '../attachments/resource.ts';
import { CONTROL_CHARACTERS_MESSAGE, textPattern } from '../text.ts';

export const MESSAGE_TYPES = ['request', 'response', 'note'] as const;

/** A cc's display name goes into the mail's header: a name like any other (shared/text.ts), empty allowed. */
export const CcSchema = z.object({ email: z.email().max(254), name: z.string().max(128).regex(textPattern(), CONTROL_CHARACTERS_MESSAGE).nullable().optional() }).meta({ id: 'MessageCc' });

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
