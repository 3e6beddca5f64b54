import { eventConsumer } from '#shared/events/consumer.ts';
import { COUNTED_TICKET_EVENTS } from '#shared/tickets/change-tally.ts';
import { ticketRefDetailSchema } from '#shared/tickets/events.ts';
import { applyTicketEvent } from '#shared/views/counting.ts';

/** What the view-counts queue receives (rule ticket-events-to-view-counts): each event names its ticket. */
const ViewCountEventSchema = ticketRefDetailSchema(COUNTED_TICKET_EVENTS);

/** SQS consumer of ticket.created / updated / deleted: the ticket settled against the account's views, the event marked applied once. */
export const handler = eventConsumer('view-counts', ViewCountEventSchema, async (detail, _envelope, batch) => {
  await applyTicketEvent(detail.accountId, detail.data.ticket.id, detail.eventId, batch, { created: detail.event === 'ticket.created' });
});
