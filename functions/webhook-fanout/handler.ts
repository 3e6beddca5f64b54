import { eventConsumer } from '#shared/events/consumer.ts';
import { TicketEventDetailSchema } from '#shared/tickets/events.ts';
import { fanOut } from '#shared/webhooks/delivery.ts';
import { fanoutSettings } from './settings.ts';

const queueUrl = fanoutSettings().WEBHOOK_DELIVERY_QUEUE_URL;

/** SQS consumer of ticket events (rule ticket-events-to-webhooks): one delivery per subscribed active webhook. */
export const handler = eventConsumer('webhook-fanout', TicketEventDetailSchema, async (detail, _envelope, batch) => {
  await fanOut(detail, queueUrl, { batch });
});
