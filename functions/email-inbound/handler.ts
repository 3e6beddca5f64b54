import { handleNotification, handleReceipt } from '#shared/email/receipt.ts';
import { InboundEventSchema, SesNotificationSchema } from '#shared/email/ses-events.ts';
import { logger } from '#shared/logger.ts';

/**
 * The inbound mail function (decisions §17): invoked by the SES receipt rule
 * (after its S3 action stored the raw message) and by the SNS topic of the
 * sending configuration set's bounces and complaints. A failure throws: SES's
 * asynchronous invocation retries it, and the local SMTP server answers 451 so
 * the sender retries; a second delivery of a mail is recognised by its
 * Message-ID and makes nothing new.
 */
export const handler = async (event: unknown): Promise<void> => {
  const parsed = InboundEventSchema.safeParse(event);
  if (!parsed.success) {
    // Nothing SES or SNS sends looks like this: retrying would not make it readable.
    logger.error('email-inbound: not an SES receipt or SNS notification', { issues: parsed.error.issues.slice(0, 5) });
    return;
  }
  for (const record of parsed.data.Records) {
    if ('ses' in record) {
      await handleReceipt(record);
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(record.Sns.Message);
    } catch {
      body = undefined;
    }
    const notification = SesNotificationSchema.safeParse(body);
    if (notification.success) await handleNotification(notification.data);
    else logger.warn('email-inbound: an SNS message that is not an SES notification', { snsMessageId: record.Sns.MessageId });
  }
};
