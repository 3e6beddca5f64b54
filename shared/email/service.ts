import { bindEntity } from '../db/entity.ts';
import { ENTITIES } from '../db/keys.ts';
import { writeNow } from '../db/transact.ts';
import type { MessageInEvent } from '../messages/model.ts';
import { findTicket } from '../tickets/service.ts';
import { listAccountAdmins } from '../users/api.ts';
import type { WebhookDisabledData } from '../webhooks/events.ts';
import type { EmailPort } from './port.ts';

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
const markers = bindEntity<EmailMarker>(ENTITIES.emailSent, { fields: ['state', 'claimedAt', 'sentAt'] });

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

/**
 * Send the email of an agent's response: to the explicit recipients (forwards)
 * or the ticket's requester, copying the ccs. A marker makes redelivered
 * events harmless; a message whose ticket has no requester sends nothing.
 */
export function sendResponseEmail(port: EmailPort, accountId: string, message: MessageInEvent): Promise<'sent' | 'skipped'> {
  return sendOnce({ accountId, id: message.id }, async () => {
    const ticket = await findTicket(accountId, message.ticketId);
    const to = message.recipients.length ? message.recipients : ticket?.requesterEmail ? [ticket.requesterEmail] : [];
    if (!to.length) return 'skipped';
    await port.send({
      id: message.id,
      to,
      cc: message.ccs.map((c) => ({ email: c.email, name: c.name ?? null })),
      subject: `${message.isForward ? 'Fwd' : 'Re'}: ${ticket?.subject ?? 'Your request'} [${message.ticketId}]`,
      text: message.textContent,
      html: message.content,
    });
    return 'sent';
  });
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const paragraphs = (text: string) => `<p>${escapeHtml(text).replace(/\n\n/g, '</p><p>')}</p>`;

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
          to: [admin.email],
          cc: [],
          subject: `Webhook switched off: ${webhook.name}`,
          text: `Hello ${admin.name},\n\n${text}`,
          html: paragraphs(`Hello ${admin.name},\n\n${text}`),
        });
        return 'sent';
      });
    }),
  );
  return sent.filter((s) => s === 'sent').length;
}

/** The invitation email of a user invited with send_invitation (idempotent like responses). */
export function sendInvitationEmail(port: EmailPort, accountId: string, invited: { id: string; email: string; name: string; role: string }): Promise<'sent' | 'skipped'> {
  return sendOnce({ accountId, id: `invite-${invited.id}` }, async () => {
    const text = `Hello ${invited.name},\n\nYou have been invited to the support desk as ${invited.role}. Your administrator will send you your sign-in credentials.`;
    await port.send({
      id: `invite-${invited.id}`,
      to: [invited.email],
      cc: [],
      subject: 'You are invited to the support desk',
      text,
      html: `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n\n/g, '</p><p>')}</p>`,
    });
    return 'sent';
  });
}
