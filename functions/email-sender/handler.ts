import { configuredEmailPort } from '#shared/email/port.ts';
import { sendInvitationEmail, sendResponseEmail } from '#shared/email/service.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { MESSAGE_CREATED } from '#shared/messages/events.ts';
import type { Message } from '#shared/messages/model.ts';
import { USER_INVITED } from '#shared/users/events.ts';

const port = configuredEmailPort();

/** SQS consumer of message.created (responses with send_email) and user.invited (invitations), through the email port. */
export const handler = eventConsumer('email-sender', async (detail) => {
  if (detail.event === MESSAGE_CREATED && detail.data.sendEmail) await sendResponseEmail(port, detail.accountId, detail.data.message as Message);
  if (detail.event === USER_INVITED) await sendInvitationEmail(port, detail.accountId, detail.data.user as { id: string; email: string; name: string; role: string });
});
