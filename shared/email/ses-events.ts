import * as z from '../zod.ts';

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
      messageId: z.string().check(z.minLength(1), z.maxLength(256)),
      timestamp: z.string(),
      source: z.string(),
      destination: z.array(z.string()),
    }),
    receipt: z.object({
      /** The envelope recipients this rule matched (RCPT TO), not the To header. */
      recipients: z.array(z.string()).check(z.minLength(1)),
      spamVerdict: Verdict,
      virusVerdict: Verdict,
      spfVerdict: Verdict,
      dkimVerdict: Verdict,
      dmarcVerdict: Verdict,
      /** The sender domain's DMARC policy when its verdict is FAIL (NONE, QUARANTINE, REJECT), as SES reports it. */
      dmarcPolicy: z.optional(z.string()),
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
    tags: z.optional(z.record(z.string(), z.array(z.string()))),
  }),
  bounce: z.optional(
    z.object({
      bounceType: z.enum(['Undetermined', 'Permanent', 'Transient']),
      bounceSubType: z.optional(z.string()),
      bouncedRecipients: z.array(z.object({ emailAddress: z.string(), diagnosticCode: z.optional(z.string()) })),
    }),
  ),
  complaint: z.optional(z.object({ complainedRecipients: z.array(z.object({ emailAddress: z.string() })), complaintFeedbackType: z.optional(z.string()) })),
});
export type SesNotification = z.infer<typeof SesNotificationSchema>;

export const SnsRecordSchema = z.object({ EventSource: z.literal('aws:sns'), Sns: z.object({ MessageId: z.string(), Message: z.string() }) });

/** One event of the inbound function: SES receipt records, or SNS records carrying SES notifications. */
export const InboundEventSchema = z.object({ Records: z.array(z.union([SesReceiptRecordSchema, SnsRecordSchema])).check(z.minLength(1)) });
export type InboundEvent = z.infer<typeof InboundEventSchema>;

/** Where the receipt rule's S3 action puts a received mail (then `mail.messageId`), and where a refused one is kept. */
export const INBOUND_OBJECT_PREFIX = 'inbound/';
export const QUARANTINE_OBJECT_PREFIX = 'quarantine/';
