import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import { LinksSchema, PageMetaSchema } from '../pagination/cursor-page.ts';
import { CreateTicketBodySchema, ListTicketsQuerySchema, TicketIdParamsSchema, TicketSchema, UpdateTicketBodySchema } from './model.ts';

const BASE = '/helpdesk/api/v1/tickets';
const TicketEnvelope = z.meta(z.object({ ticket: TicketSchema }), { id: 'TicketResponse' });

/** Tickets (api-spec "Ticket endpoints"; decisions §6). Reads need viewer, writes agent. */
export const ticketRoutes = defineRoutes([
  {
    operationId: 'listTickets',
    method: 'GET',
    path: BASE,
    group: 'tickets',
    summary: 'List tickets',
    description:
      'Filters status, priority, assignee_id, and search (word prefixes over the subject, the requester name and email, tags and the id, ignoring case and accents; combines with the filters and sorts; decisions §16); sort_by created_at|updated_at|status|priority (status in workflow order new..closed, priority low..urgent); cursor pages via links.next. Bounded work: one request reads at most 1,000 tickets from the store; a filtered page that reaches that budget answers the matches found so far (possibly fewer than page_size, or none) with hasMore true and links.next continuing from where it stopped, so following links.next yields every match exactly once.',
    access: 'viewer',
    query: ListTicketsQuerySchema,
    success: { status: 200, description: 'A page of tickets', schema: z.meta(z.object({ tickets: z.array(TicketSchema), meta: PageMetaSchema, links: LinksSchema }), { id: 'TicketList' }) },
    errors: [400, 403],
  },
  {
    operationId: 'getTicket',
    method: 'GET',
    path: `${BASE}/{id}`,
    group: 'tickets',
    summary: 'Get a ticket',
    access: 'viewer',
    params: TicketIdParamsSchema,
    success: { status: 200, description: 'The ticket', schema: TicketEnvelope },
    errors: [403, 404],
  },
  {
    operationId: 'createTicket',
    method: 'POST',
    path: BASE,
    group: 'tickets',
    summary: 'Create a ticket',
    description: 'Defaults: status new, priority normal, type question. Custom field values are validated by their field type; required-for-agents fields must have a value. Publishes ticket.created.',
    access: 'agent',
    body: CreateTicketBodySchema,
    wrapper: 'ticket',
    success: { status: 201, description: 'The created ticket', schema: TicketEnvelope },
    errors: [400, 403, 422],
  },
  {
    operationId: 'updateTicket',
    method: 'PUT',
    path: `${BASE}/{id}`,
    group: 'tickets',
    summary: 'Update a ticket',
    description:
      'Only the given fields change. A closed ticket cannot change (403 TICKET_CLOSED); status closed is for automations only (403 CLOSED_STATUS_SYSTEM_ONLY). Publishes ticket.updated, and ticket.assignment.changed / ticket.resolved when they apply.',
    access: 'agent',
    params: TicketIdParamsSchema,
    body: UpdateTicketBodySchema,
    wrapper: 'ticket',
    success: { status: 200, description: 'The updated ticket', schema: TicketEnvelope },
    errors: [400, 403, 404, 409, 422],
  },
  {
    operationId: 'deleteTicket',
    method: 'DELETE',
    path: `${BASE}/{id}`,
    group: 'tickets',
    summary: 'Delete a ticket',
    description: 'Publishes ticket.deleted.',
    access: 'agent',
    params: TicketIdParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404],
  },
]);
