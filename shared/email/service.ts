import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import type { Message } from '../messages/model.ts';
import { getTicket } from '../tickets/repository.ts';
import type { EmailPort } from './port.ts';

/**
 * Send the email of an agent's response: to the explicit recipients (forwards)
 * or the ticket's requester, copying the ccs. A marker makes redelivered
 * events harmless; a message whose ticket has no requester sends nothing.
 */
export async function sendResponseEmail(port: EmailPort, accountId: string, message: Message): Promise<'sent' | 'skipped'> {
  const marker = keys.emailSent(accountId, message.id);
  if ((await ddb.send(new GetCommand({ TableName: tableName(), Key: marker }))).Item) return 'skipped';
  const ticket = await getTicket(accountId, message.ticketId);
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
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...marker, type: 'emailSent', sentAt: new Date().toISOString() } }));
  return 'sent';
}

/** The invitation email of a user invited with send_invitation (idempotent like responses). */
export async function sendInvitationEmail(port: EmailPort, accountId: string, invited: { id: string; email: string; name: string; role: string }): Promise<'sent' | 'skipped'> {
  const marker = keys.emailSent(accountId, `invite-${invited.id}`);
  if ((await ddb.send(new GetCommand({ TableName: tableName(), Key: marker }))).Item) return 'skipped';
  const text = `Hello ${invited.name},\n\nYou have been invited to the support desk as ${invited.role}. Your administrator will send you your sign-in credentials.`;
  await port.send({ id: `invite-${invited.id}`, to: [invited.email], cc: [], subject: 'You are invited to the support desk', text, html: `<p>${text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\n\n/g, '</p><p>')}</p>` });
  await ddb.send(new PutCommand({ TableName: tableName(), Item: { ...marker, type: 'emailSent', sentAt: new Date().toISOString() } }));
  return 'sent';
}
