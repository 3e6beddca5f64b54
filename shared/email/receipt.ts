import { METRICS } from '../metrics.ts';
import { logger } from '../logger.ts';
import { getMessageRecord, setEmailDelivery } from '../messages/api.ts';
import { recordMetric } from '../observability.ts';
import { findInboundRecipient, type InboundRecipient } from './addresses.ts';
import { parseMail, receiveMail, type MailResult } from './inbound.ts';
import { markUndeliverable } from './repository.ts';
import { INBOUND_OBJECT_PREFIX, QUARANTINE_OBJECT_PREFIX, type SesNotification, type SesReceiptRecord } from './ses-events.ts';

/** The S3 client and its commands load from their chunk at the first mail that needs the bucket (not for a notification). */
const objects = () => import('../attachments/objects.ts');

/**
 * Whether a receipt's verdicts keep its mail out (decisions §17): spam or a
 * virus, or a DMARC failure whose domain asks receivers to reject. SPF and
 * DKIM alone do not: forwarding from a support address breaks SPF routinely,
 * and DMARC already weighs both against the domain's own policy.
 */
export const quarantines = (r: Pick<SesReceiptRecord['ses']['receipt'], 'spamVerdict' | 'virusVerdict' | 'dmarcVerdict' | 'dmarcPolicy'>): boolean =>
  r.spamVerdict.status === 'FAIL' || r.virusVerdict.status === 'FAIL' || (r.dmarcVerdict.status === 'FAIL' && r.dmarcPolicy?.toUpperCase() === 'REJECT');

/**
 * What the inbound function does with one SES receipt (decisions §17): a mail
 * whose verdicts keep it out (`quarantines`) is kept in quarantine and
 * counted, never a ticket; a mail for no account is dropped and counted; any
 * other is read from the bucket, parsed once, and received by each account it
 * is for. A mail the parser refuses (nesting or headers beyond its limits) is
 * quarantined too: retrying could never read it, and it must not be lost.
 */
export async function handleReceipt(record: SesReceiptRecord): Promise<MailResult[]> {
  const { mail, receipt } = record.ses;
  const key = `${INBOUND_OBJECT_PREFIX}${mail.messageId}`;
  const verdicts = {
    spam: receipt.spamVerdict.status,
    virus: receipt.virusVerdict.status,
    spf: receipt.spfVerdict.status,
    dkim: receipt.dkimVerdict.status,
    dmarc: receipt.dmarcVerdict.status,
    dmarcPolicy: receipt.dmarcPolicy ?? null,
  };
  const quarantine = async (reason: string): Promise<MailResult[]> => {
    await (await objects()).copyObject(key, `${QUARANTINE_OBJECT_PREFIX}${mail.messageId}`, `${mail.messageId}.eml`, 'message/rfc822');
    recordMetric(METRICS.mailQuarantined);
    logger.warn('email: quarantined', { sesMessageId: mail.messageId, from: mail.source, reason, ...verdicts });
    return [{ outcome: 'dropped', note: `quarantined: ${reason}` }];
  };
  if (quarantines(receipt)) return quarantine('verdicts');
  const found = await Promise.all(receipt.recipients.map((r) => findInboundRecipient(r)));
  // One ticket per account, however many of its addresses the mail names.
  const recipients = [...new Map(found.filter((r): r is InboundRecipient => Boolean(r)).map((r) => [r.accountId, r])).values()];
  if (!recipients.length) {
    recordMetric(METRICS.mailDropped);
    logger.warn('email: for no account', { sesMessageId: mail.messageId, recipients: receipt.recipients });
    return [{ outcome: 'dropped', note: 'no account has this address' }];
  }
  const raw = await (await objects()).readObject(key);
  let parsed: Awaited<ReturnType<typeof parseMail>>;
  try {
    parsed = await parseMail(raw);
  } catch (err) {
    return quarantine(`unparseable: ${(err as Error).message}`);
  }
  const results: MailResult[] = [];
  for (const r of recipients) {
    const result = await receiveMail(r.accountId, parsed, { from: mail.source, replyToken: r.replyToken, fallbackId: mail.messageId, rawKey: key });
    recordMetric(result.outcome === 'duplicate' ? METRICS.mailDuplicate : result.outcome === 'dropped' ? METRICS.mailDropped : METRICS.mailReceived);
    logger.info('email: received', { accountId: r.accountId, sesMessageId: mail.messageId, ...verdicts, ...result });
    results.push(result);
  }
  return results;
}

/**
 * An SES notification of the sending configuration set: a hard bounce or a
 * complaint marks each address undeliverable in the account the response
 * came from (its message tags), and the response records it. Soft bounces
 * and other events change nothing.
 */
export async function handleNotification(n: SesNotification): Promise<number> {
  const hard = n.eventType === 'Bounce' && n.bounce?.bounceType === 'Permanent';
  const complaint = n.eventType === 'Complaint';
  if (!hard && !complaint) return 0;
  const accountId = n.mail.tags?.account?.[0];
  const messageId = n.mail.tags?.message?.[0];
  if (!accountId) {
    logger.warn('email: notification without the account tag', { sesMessageId: n.mail.messageId, eventType: n.eventType });
    return 0;
  }
  const addresses = hard
    ? (n.bounce?.bouncedRecipients ?? []).map((r) => ({ email: r.emailAddress, detail: r.diagnosticCode ?? null }))
    : (n.complaint?.complainedRecipients ?? []).map((r) => ({ email: r.emailAddress, detail: n.complaint?.complaintFeedbackType ?? null }));
  const at = new Date().toISOString();
  await Promise.all(addresses.map((a) => markUndeliverable({ accountId, email: a.email.toLowerCase(), reason: hard ? 'bounce' : 'complaint', detail: a.detail, at })));
  recordMetric(METRICS.mailUndeliverable, addresses.length);
  const message = messageId ? await getMessageRecord(accountId, messageId) : null;
  if (message?.emailDelivery) {
    await setEmailDelivery(accountId, message.ticketId, message.id, {
      ...message.emailDelivery,
      status: hard ? 'bounced' : 'complained',
      reason: addresses.map((a) => `${a.email}${a.detail ? `: ${a.detail}` : ''}`).join('; ') || null,
      updatedAt: at,
    });
  }
  return addresses.length;
}
