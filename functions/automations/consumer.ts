import { onTicketEvent } from '#shared/automations/service.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { TicketEventDetailSchema } from '#shared/tickets/events.ts';

/** What the automations queue receives (rule ticket-events-to-automations). */
const AutomationEventDetailSchema = TicketEventDetailSchema.extend({ event: TicketEventDetailSchema.shape.event.extract(['ticket.created', 'ticket.updated']) });

/** SQS consumer of ticket.created / ticket.updated (rule ticket-events-to-automations). */
export const handler = eventConsumer('automations', AutomationEventDetailSchema, async (detail, _envelope, batch) => {
  await onTicketEvent(detail, new Date(), batch);
});
