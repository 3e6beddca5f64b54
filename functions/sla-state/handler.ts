import * as z from 'zod';
import { eventConsumer } from '#shared/events/consumer.ts';
import { ticketRefDetailSchema } from '#shared/events/ticket-events.ts';
import { MessageCreatedDetailSchema } from '#shared/messages/event-schemas.ts';
import * as sla from '#shared/sla/service.ts';

/** What the sla queue receives (rules ticket-events-to-sla, message-created-to-sla). */
const SlaEventDetailSchema = z.discriminatedUnion('event', [ticketRefDetailSchema(['ticket.created', 'ticket.updated', 'ticket.resolved', 'ticket.deleted']), MessageCreatedDetailSchema]);

/** SQS consumer of ticket events and message.created: keeps each ticket's SLA state (decisions §10). */
export const handler = eventConsumer('sla', SlaEventDetailSchema, async (detail) => {
  if (detail.event === 'message.created') return sla.onMessage(detail.accountId, detail.data.message);
  if (detail.event === 'ticket.deleted') return sla.onTicketDeleted(detail.accountId, detail.data.ticket.id);
  return sla.onTicketChanged(detail.accountId, detail.data.ticket.id);
});
