import * as z from '../zod.ts';
import { TICKET_EVENT_TYPES, type TicketEventType } from './event-names.ts';

export { TICKET_EVENT_SOURCE, TICKET_EVENT_TYPES, type TicketEventType } from './event-names.ts';

export const timestamp = z.describe(z.iso.datetime({ precision: 3 }), 'ISO 8601 UTC with milliseconds');
/** decisions §7: present (true) when long string values in `data` were shortened to keep the event under 256 KB. */
export const truncated = z.describe(z.optional(z.literal(true)), 'Long string values in data were shortened (none below 64 characters); fetch the ticket for the full values');

/**
 * EventBridge `detail` of a ticket event: the webhook payload plus the
 * account, the event's own id (`evt_...`, stable across retries) and, on
 * changes to an existing ticket, who acted (`actor`; not part of the webhook body).
 */
export const EventActorSchema = z.describe(
  z.object({ type: z.enum(['user', 'automation']), id: z.string() }),
  'Who made the change: a user (API key or session) or an automation. Automations skip events an automation caused, so they never loop.',
);

export const TicketEventDetailSchema = z.meta(
  z.object({
    eventId: z.string(),
    accountId: z.string(),
    correlationId: z.optional(z.string()),
    event: z.enum(TICKET_EVENT_TYPES),
    truncated,
    timestamp,
    data: z.record(z.string(), z.unknown()),
    actor: z.optional(EventActorSchema),
  }),
  { id: 'TicketEventDetail' },
);
export type TicketEventDetail = z.infer<typeof TicketEventDetailSchema>;

/**
 * A ticket event of these types as a consumer that acts on the ticket by its
 * id reads it (SLA state, attachment clean-up): every ticket event's data
 * names the ticket, truncated or not; the rest of `data` is not read.
 */
export const ticketRefDetailSchema = <const T extends TicketEventType>(types: readonly [T, ...T[]]) =>
  z.extend(TicketEventDetailSchema, { event: z.enum(types), data: z.object({ ticket: z.object({ id: z.string() }) }) });
