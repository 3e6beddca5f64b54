import { configuredEmailPort } from '../../shared/email/port.ts';
import { sendResponseEmail } from '../../shared/email/service.ts';
import { eventConsumer } from '../../shared/events/consumer.ts';
import { MESSAGE_CREATED } from '../../shared/messages/events.ts';
import type { Message } from '../../shared/messages/model.ts';

const port = configuredEmailPort();

/** SQS consumer of message.created: responses with send_email go out through the email port. */
export const handler = eventConsumer('email-sender', async (detail) => {
  if (detail.event !== MESSAGE_CREATED || !detail.data.sendEmail) return;
  await sendResponseEmail(port, detail.accountId, detail.data.message as Message);
});
