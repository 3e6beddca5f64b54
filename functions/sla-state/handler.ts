import * as z from '#shared/zod.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { TicketEventDetailSchema, ticketRefDetailSchema } from '#shared/tickets/events.ts';
import { MessageCreatedDetailSchema } from '#shared/messages/event-schemas.ts';
import * as sla from '#shared/sla/service.ts';
import { TicketSchema } from '#shared/tickets/resource.ts';

/** A ticket.created keeps the ticket it carries (the whole ticket, or only its id when truncated to the last resort). */
const CreatedDetailSchema = z.extend(TicketEventDetailSchema, { event: z.literal('ticket.created'), data: z.object({ ticket: z.union([TicketSchema, z.object({ id: z.string() })]) }) });

/** What the sla queue receives (rules ticket-events-to-sla, message-created-to-sla). */
const SlaEventDetailSchema = z.discriminatedUnion('event', [CreatedDetailSchema, ticketRefDetailSchema(['ticket.updated', 'ticket.resolved', 'ticket.deleted']), MessageCreatedDetailSchema]);

/** SQS consumer of ticket events and message.created: keeps each ticket's SLA state (decisions §10). */
export const handler = eventConsumer('sla', SlaEventDetailSchema, async (detail, _envelope, batch) => {
  if (detail.event === 'message.created') return sla.onMessage(detail.accountId, detail.data.message, Date.now(), { batch });
  if (detail.event === 'ticket.deleted') return sla.onTicketDeleted(detail.accountId, detail.data.ticket.id);
  // A ticket.created carries the ticket as committed (version 1), unless its values were shortened to fit the event, or
  // it joined a group: distribution may have assigned it in the same transaction, under the same version.
  const t = detail.event === 'ticket.created' && !detail.truncated && 'subject' in detail.data.ticket ? detail.data.ticket : undefined;
  const carried = t && t.groupId === null ? t : undefined;
  return sla.onTicketChanged(detail.accountId, detail.data.ticket.id, Date.now(), { batch, created: carried && { ...carried, accountId: detail.accountId, version: 1 } });
});
