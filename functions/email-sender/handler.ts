import * as z from '#shared/zod.ts';
import { configuredEmailPort } from '#shared/email/port.ts';
import { sendInvitationEmail, sendResponseEmail, sendWebhookDisabledEmails } from '#shared/email/service.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { MessageCreatedDetailSchema } from '#shared/messages/event-schemas.ts';
import { MESSAGE_CREATED } from '#shared/messages/events.ts';
import { ticketRefDetailSchema } from '#shared/tickets/events.ts';
import { sendSurveyEmail } from '#shared/satisfaction/survey.ts';
import { USER_INVITED, UserInvitedDetailSchema } from '#shared/users/events.ts';
import { WebhookDisabledDetailSchema } from '#shared/webhooks/events.ts';

const port = configuredEmailPort();

/** What the email-sender queue receives (rules message-created-to-email, user-invited-to-email, webhook-disabled-to-email, ticket-resolved-to-survey). */
const EmailEventDetailSchema = z.discriminatedUnion('event', [MessageCreatedDetailSchema, UserInvitedDetailSchema, WebhookDisabledDetailSchema, ticketRefDetailSchema(['ticket.resolved'])]);

/** SQS consumer of message.created (responses with send_email), user.invited (invitations), webhook.disabled (the admins) and ticket.resolved (the survey), through the email port. */
export const handler = eventConsumer('email-sender', EmailEventDetailSchema, async (detail) => {
  if (detail.event === MESSAGE_CREATED) {
    if (detail.data.sendEmail) await sendResponseEmail(port, detail.accountId, detail.data.message);
  } else if (detail.event === USER_INVITED) await sendInvitationEmail(port, detail.accountId, detail.data.user);
  else if (detail.event === 'ticket.resolved') await sendSurveyEmail(port, detail.accountId, detail.data.ticket.id);
  else await sendWebhookDisabledEmails(port, detail.accountId, detail.eventId, detail.data);
});
