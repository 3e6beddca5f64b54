import * as z from 'zod';

/**
 * What SES hands the inbound function (decisions §17), as AWS documents it:
 * a receipt rule's Lambda action event (the raw message is already in the
 * bucket under the S3 action's prefix and `mail.messageId`), and the SNS
 * notifications of the sending configuration set (bounces, complaints).
 * Only the fields the function reads are declared; the rest pass through.
 */
const Verdict = z.object({ status: z.enum(['PASS', 'FAIL', 'GRAY', 'PROCESSING_FAILED', 'DISABLED']) });

export const SesReceiptRecordSchema = z.object({
  eventSource: z.literal('aws:ses'),
  ses: z.object({
    mail: z.object({
      /** SES's id of the received mail: the object key under the S3 action's prefix. */
      messageId: z.string().min(1).max(256),
      timestamp: z.string(),
      source: z.string(),
      destination: z.array(z.string()),
    }),
    receipt: z.object({
      /** The envelope recipients this rule matched (RCPT TO), not the To header. */
      recipients: z.array(z.string()).min(1),
      spamVerdict: Verdict,
      virusVerdict: Verdict,
      spfVerdict: Verdict,
      dkimVerdict: Verdict,
      dmarcVerdict: Verdict,
      /** The sender domain's DMARC policy when its verdict is FAIL (NONE, QUARANTINE, REJECT), as SES reports it. */
      dmarcPolicy: z.string().optional(),
    }),
  }),
});
export type SesReceiptRecord = z.infer<typeof SesReceiptRecordSchema>;

/** An SES event notification (configuration set -> SNS), the parts that mark addresses undeliverable. */
export const SesNotificationSchema = z.object({
  eventType: z.enum(['Bounce', 'Complaint', 'Delivery', 'Send', 'Reject', 'Open', 'Click', 'DeliveryDelay', 'RenderingFailure', 'Subscription']),
  mail: z.object({
    messageId: z.string(),
    /** The message tags SendEmail set (EmailTags): `account` and `message` name the response. */
    tags: z.record(z.string(), z.array(z.string())).optional(),
  }),
  bounce: z
    .object({
      bounceType: z.enum(['Undetermined', 'Permanent', 'Transient']),
      bounceSubType: z.string().optional(),
      bouncedRecipients: z.array(z.object({ emailAddress: z.string(), diagnosticCode: z.string().optional() })),
    })
    .optional(),
  complaint: z.object({ complainedRecipients: z.array(z.object({ emailAddress: z.string() })), complaintFeedbackType: z.string().optional() }).optional(),
});
export type SesNotification = z.infer<typeof SesNotificationSchema>;

export const SnsRecordSchema = z.object({ EventSource: z.literal('aws:sns'), Sns: z.object({ MessageId: z.string(), Message: z.string() }) });

/** One event of the inbound function: SES receipt records, or SNS records carrying SES notifications. */
export const InboundEventSchema = z.object({ Records: z.array(z.union([SesReceiptRecordSchema, SnsRecordSchema])).min(1) });
export type InboundEvent = z.infer<typeof InboundEventSchema>;

/** Where the receipt rule's S3 action puts a received mail (then `mail.messageId`), and where a refused one is kept. */
export const INBOUND_OBJECT_PREFIX = 'inbound/';
export const QUARANTINE_OBJECT_PREFIX = 'quarantine/';
