import { eventConsumer } from '#shared/events/consumer.ts';
import { MESSAGE_CREATED } from '#shared/messages/events.ts';
import * as sla from '#shared/sla/service.ts';

/** SQS consumer of ticket events and message.created: keeps each ticket's SLA state (decisions §10). */
export const handler = eventConsumer('sla', async (detail) => {
  const ticketId = (detail.data.ticket as { id?: string } | undefined)?.id;
  if (detail.event === 'ticket.deleted' && ticketId) return sla.onTicketDeleted(detail.accountId, ticketId);
  if (detail.event.startsWith('ticket.') && ticketId) return sla.onTicketChanged(detail.accountId, ticketId);
  if (detail.event === MESSAGE_CREATED) return sla.onMessage(detail.accountId, detail.data.message as { id: string; ticketId: string; type: string; createdAt: string });
});
