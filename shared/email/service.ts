import { bindEntity } from '../db/entity.ts';
import { emailEntities } from '../db/entities/email.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite, writeNow } from '../db/transact.ts';
import { setEmailDelivery } from '../messages/api.ts';
import type { EmailDelivery, MessageInEvent } from '../messages/resource.ts';
import { findTicket } from '../tickets/service.ts';
import { listAccountAdmins } from '../users/api.ts';
import type { WebhookDisabledData } from '../webhooks/events.ts';
import { inboundDomain, replyAddress } from './addresses.ts';
import { textAsHtml, withoutReplyPrefix } from './mail-rules.ts';
import type { EmailPort } from './port.ts';
import { getEmailSettings, getThread, mailIdWrite, threadWrites, undeliverableOf } from './repository.ts';
import { newReplyToken } from './tokens.ts';

/** A claim older than this belongs to a sender that crashed (the consumer's timeout is 30 s): it may be taken over. */
const CLAIM_STALE_MS = 5 * 60_000;

/** Another sender holds the claim right now: the message is retried later rather than dropped. */
export class EmailInProgressError extends Error {
  constructor(id: string) {
    super(`email ${id} is being sent by another delivery of its event`);
    this.name = 'EmailInProgressError';
  }
}

/** The marker of one email: claimed (`sending`, since `claimedAt`), then `sent` or `skipped`. */
interface EmailMarker {
  accountId: string;
  /** The message id, or `invite-<userId>`. */
  id: string;
  state: 'sending' | 'sent' | 'skipped' | null;
  claimedAt: number;
  sentAt?: string;
}
const markers = bindEntity<EmailMarker>(emailEntities.emailSent, { fields: ['state', 'claimedAt', 'sentAt'] });

const isConditionFailure = (err: unknown) => (err as Error).name === 'ConditionalCheckFailedException';

/**
 * Send an email at most once per event, also when the event is delivered
 * twice at the same moment (SQS is at-least-once): a conditional write claims
 * the marker before sending, and only the claimant sends. The marker then
 * says `sent`. A failed send releases the claim so a retry can send; a
 * claim left by a crashed sender is taken over after CLAIM_STALE_MS (the one
 * case where an email could go out twice: a crash between sending and
 * marking).
 */
async function sendOnce(marker: Pick<EmailMarker, 'accountId' | 'id'>, send: () => Promise<'sent' | 'skipped'>): Promise<'sent' | 'skipped'> {
  const now = Date.now();
  try {
    await writeNow(
      markers.put(
        { ...marker, state: 'sending', claimedAt: now },
        { expr: 'attribute_not_exists(pk) OR (#state = :sending AND claimedAt < :stale)', names: { '#state': 'state' }, values: { ':sending': 'sending', ':stale': now - CLAIM_STALE_MS } },
      ),
    );
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    const current = await markers.get(marker, { consistent: true });
    // Markers from before claims existed have no state: they mean sent.
    if (current && current.state === 'sending') throw new EmailInProgressError(markers.key(marker).sk);
    return 'skipped';
  }
  let outcome: 'sent' | 'skipped';
  try {
    outcome = await send();
  } catch (err) {
    await writeNow(markers.delete(marker, { expr: 'claimedAt = :mine', values: { ':mine': now } })).catch(() => undefined);
    throw err;
  }
  await writeNow(markers.updateAttributes(marker, { set: { state: outcome, sentAt: new Date().toISOString() } }));
  return outcome;
}

/** The Message-ID of the mail we send for a message: ours, on the inbound domain, so a reply that names it finds the ticket. */
export const outboundMailId = (id: string, domain = inboundDomain()) => `<${id}@${domain}>`;

/**
 * Put the Message-IDs of a mail into the ticket's thread and the index, so a
 * reply naming any of them threads: before the mail leaves (a reply can come
 * back within a second), and again with the id SES gave it. Answers the
 * thread as it was before (its ids are the new mail's References).
 */
export async function recordOutboundIds(accountId: string, ticketId: string, messageId: string, ids: readonly string[]) {
  return retryOnConflict(async () => {
    const thread = await getThread(accountId, ticketId);
    const replyToken = thread?.replyToken ?? newReplyToken();
    const at = new Date().toISOString();
    await transactWrite([
      ...threadWrites(accountId, ticketId, thread, ids, () => replyToken),
      ...ids.map((mailId) => mailIdWrite({ accountId, mailId, ticketId, messageId, direction: 'out', at }, () => undefined)),
    ]);
    // A send tried again after a failure finds its own id in the thread already: a mail never refers to itself.
    return { references: (thread?.mailIds ?? []).filter((id) => !ids.includes(id)), replyToken };
  });
}

/**
 * Send the email of an agent's response (decisions §12, §17): to the explicit
 * recipients (forwards) or the ticket's requester, copying the ccs, leaving
 * out addresses marked undeliverable. It carries the thread's headers and the
 * ticket's reply address; the message records what became of it. A marker
 * makes redelivered events harmless.
 */
export function sendResponseEmail(port: EmailPort, accountId: string, message: MessageInEvent): Promise<'sent' | 'skipped'> {
  return sendOnce({ accountId, id: message.id }, async () => {
    const ticket = await findTicket(accountId, message.ticketId);
    const wanted = message.recipients.length ? message.recipients : ticket?.requesterEmail ? [ticket.requesterEmail] : [];
    const ccs = message.ccs.map((c) => ({ email: c.email, name: c.name ?? null }));
    const [blocked, settings] = await Promise.all([undeliverableOf(accountId, [...wanted, ...ccs.map((c) => c.email)]), getEmailSettings(accountId)]);
    const open = (email: string) => !blocked.has(email.toLowerCase());
    const to = wanted.filter(open);
    const cc = ccs.filter((c) => open(c.email));
    const skipped = [...wanted, ...ccs.map((c) => c.email)].filter((e) => !open(e));
    const delivery = (status: EmailDelivery['status'], reason: string | null): EmailDelivery => ({ status, to, cc: cc.map((c) => c.email), skipped, reason, updatedAt: new Date().toISOString() });
    if (!ticket || !to.length) {
      const reason = !ticket ? 'the ticket was deleted' : wanted.length ? 'every recipient is marked undeliverable (a hard bounce or a complaint)' : 'the ticket has no requester';
      await setEmailDelivery(accountId, message.ticketId, message.id, delivery('not_sent', reason)).catch(() => undefined);
      return 'skipped';
    }
    const ourId = outboundMailId(message.id);
    const { references, replyToken } = await recordOutboundIds(accountId, ticket.id, message.id, [ourId]);
    const sent = await port.send({
      id: message.id,
      fromName: settings?.fromName ?? null,
      to: to.map((email) => ({ email })),
      cc,
      replyTo: { email: replyAddress(accountId, replyToken) },
      subject: `${message.isForward ? 'Fwd' : 'Re'}: ${withoutReplyPrefix(ticket.subject)} [${message.ticketId}]`,
      messageId: ourId,
      inReplyTo: references.at(-1) ?? null,
      references,
      headers: { 'X-Support-Desk-Ticket': ticket.id },
      tags: { account: accountId, message: message.id, ticket: ticket.id },
      text: message.textContent,
      html: message.content,
    });
    const extra = sent.messageIds.filter((id) => id !== ourId);
    if (extra.length) await recordOutboundIds(accountId, ticket.id, message.id, extra);
    await setEmailDelivery(accountId, message.ticketId, message.id, delivery('sent', null));
    return 'sent';
  });
}

const DISABLED_BECAUSE: Record<WebhookDisabledData['disabledReason'], (n: number) => string> = {
  failing: (n) => `${n} events in a row failed every retry (about 28 hours each) with no success in between`,
  gone: () => 'its target answered 410 Gone, which asks for no more deliveries',
};

/**
 * Tell the account's owner and admins that the service switched a webhook off
 * (webhook.disabled, decisions §18): one email each, at most once per event
 * and admin (the marker is the event's and the user's).
 */
export async function sendWebhookDisabledEmails(port: EmailPort, accountId: string, eventId: string, data: WebhookDisabledData): Promise<number> {
  const admins = await listAccountAdmins(accountId);
  const { webhook } = data;
  const text =
    `The webhook "${webhook.name}" (${webhook.id}) to ${webhook.targetUrl} was switched off: ${DISABLED_BECAUSE[data.disabledReason](data.consecutiveFailures)}.\n\n` +
    'Nothing is sent to it while it is off. The events it did not receive stay in its delivery log (GET /helpdesk/api/v1/webhooks/' +
    `${webhook.id}/deliveries) for 30 days. Once the receiver works again, set it active (PUT /helpdesk/api/v1/webhooks/${webhook.id} with {"webhook": {"active": true}}) ` +
    'and redeliver what it missed (POST .../deliveries/{deliveryId}/redeliver).';
  const sent = await Promise.all(
    admins.map((admin) => {
      const id = `webhook-disabled-${eventId}-${admin.id}`;
      return sendOnce({ accountId, id }, async () => {
        await port.send({
          id,
          to: [{ email: admin.email, name: admin.name }],
          messageId: outboundMailId(id),
          autoSubmitted: 'auto-generated',
          subject: `Webhook switched off: ${webhook.name}`,
          text: `Hello ${admin.name},\n\n${text}`,
          html: textAsHtml(`Hello ${admin.name},\n\n${text}`),
        });
        return 'sent';
      });
    }),
  );
  return sent.filter((s) => s === 'sent').length;
}

/** What a notice the service writes on its own says (the survey mail of decisions §24). */
export interface Notice {
  subject: string;
  text: string;
  html: string;
}

/**
 * A notice to one address, written by the service on its own (Auto-Submitted:
 * auto-generated), from the account's sender name: at most once per `id`
 * (its marker, as responses), and not at all to an address marked
 * undeliverable. `compose` runs only when the mail is really sent.
 */
export function sendNoticeOnce(port: EmailPort, accountId: string, id: string, to: { email: string; name?: string | null }, compose: () => Promise<Notice>): Promise<'sent' | 'skipped'> {
  return sendOnce({ accountId, id }, async () => {
    const [blocked, settings] = await Promise.all([undeliverableOf(accountId, [to.email]), getEmailSettings(accountId)]);
    if (blocked.size) return 'skipped';
    const notice = await compose();
    await port.send({ id, fromName: settings?.fromName ?? null, to: [to], messageId: outboundMailId(id), autoSubmitted: 'auto-generated', ...notice });
    return 'sent';
  });
}

/** The invitation email of a user invited with send_invitation (idempotent like responses). */
export function sendInvitationEmail(port: EmailPort, accountId: string, invited: { id: string; email: string; name: string; role: string }): Promise<'sent' | 'skipped'> {
  return sendOnce({ accountId, id: `invite-${invited.id}` }, async () => {
    const text = `Hello ${invited.name},\n\nYou have been invited to the support desk as ${invited.role}. Your administrator will send you your sign-in credentials.`;
    await port.send({
      id: `invite-${invited.id}`,
      to: [{ email: invited.email, name: invited.name }],
      messageId: outboundMailId(`invite-${invited.id}`),
      autoSubmitted: 'auto-generated',
      subject: 'You are invited to the support desk',
      text,
      html: textAsHtml(text),
    });
    return 'sent';
  });
}
