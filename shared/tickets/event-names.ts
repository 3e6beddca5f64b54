/**
 * The names of ticket events, without their schemas: what publishing,
 * routing and subscribing need. Building the payload schemas (and the ticket
 * schema inside them) is work at import that only validation and the OpenAPI
 * document use (`events.ts`).
 */

/** EventBridge source of every ticket event (decisions §7). */
export const TICKET_EVENT_SOURCE = 'support-desk.tickets';

export const TICKET_EVENT_TYPES = ['ticket.created', 'ticket.updated', 'ticket.deleted', 'ticket.assignment.changed', 'ticket.resolved', 'ticket.merged', 'ticket.rated'] as const;
export type TicketEventType = (typeof TICKET_EVENT_TYPES)[number];
