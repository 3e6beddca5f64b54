import { httpGroup } from '#shared/http/middleware.ts';
import { nextLink } from '#shared/http/links.ts';
import { ticketRoutes } from '#shared/tickets/contract.ts';
import * as tickets from '#shared/tickets/service.ts';

const { toTicketDto } = tickets;
const createdAnswer = (t: tickets.TicketRecord) => ({ ticket: toTicketDto(t) });

export const handler = httpGroup(ticketRoutes, {
  listTickets: async ({ principal, query, event }) => {
    const page = await tickets.listTickets(principal, query);
    return { tickets: page.tickets.map(toTicketDto), meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
  getTicket: async ({ principal, params }) => ({ ticket: toTicketDto(await tickets.getTicket(principal, params.id)) }),
  // The answer commits with the ticket when the request holds an Idempotency-Key (decisions: ambiguous writes).
  createTicket: async ({ principal, body }) => createdAnswer(await tickets.createTicket(principal, body.ticket, { answer: createdAnswer })),
  updateTicket: async ({ principal, params, body }) => ({ ticket: toTicketDto(await tickets.updateTicket(principal, params.id, body.ticket)) }),
  deleteTicket: async ({ principal, params }) => tickets.deleteTicket(principal, params.id),
});
