import * as z from '#shared/zod.ts';
import { onTicketEvent } from '#shared/automations/service.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { TicketEventDetailSchema } from '#shared/tickets/events.ts';

/** What the automations queue receives (rule ticket-events-to-automations). */
const AutomationEventDetailSchema = z.extend(TicketEventDetailSchema, { event: z.enum(['ticket.created', 'ticket.updated']) });

/** SQS consumer of ticket.created / ticket.updated (rule ticket-events-to-automations). */
export const handler = eventConsumer('automations', AutomationEventDetailSchema, async (detail, _envelope, batch) => {
  await onTicketEvent(detail, new Date(), batch);
});
