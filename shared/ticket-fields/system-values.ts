/**
 * The values of a ticket's system dropdowns (status, priority, type): the
 * options of the system fields (./system-fields.ts) and the enums of the
 * ticket resource (shared/tickets/model.ts), declared here, below both, so
 * that the field definitions, tickets, group conditions and message ticket
 * updates share one list.
 */
export const TICKET_STATUSES = ['new', 'open', 'pending', 'resolved', 'closed'] as const;
export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export const TICKET_TYPES = ['question', 'incident', 'problem', 'task'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];
