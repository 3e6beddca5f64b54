import { onTicketEvent } from '#shared/automations/service.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { TicketEventDetailSchema } from '#shared/events/ticket-events.ts';

/** SQS consumer of ticket.created / ticket.updated (rule ticket-events-to-automations). */
export const handler = eventConsumer('automations', async (detail) => {
  await onTicketEvent(TicketEventDetailSchema.parse(detail));
});
