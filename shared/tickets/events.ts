import * as z from 'zod';
import { SatisfactionRatingSchema, TicketSchema } from './model.ts';
import { TICKET_EVENT_TYPES, type TicketEventType } from './event-names.ts';

export { TICKET_EVENT_SOURCE, TICKET_EVENT_TYPES, type TicketEventType } from './event-names.ts';

const timestamp = z.iso.datetime({ precision: 3 }).describe('ISO 8601 UTC with milliseconds');
const change = z.object({ from: z.unknown(), to: z.unknown() });
/** decisions §7: present (true) when long string values in `data` were shortened to keep the event under 256 KB. */
const truncated = z.literal(true).optional().describe('Long string values in data were shortened (none below 64 characters); fetch the ticket for the full values');

/**
 * Webhook payloads, one schema per event type (api-spec "Events", decisions §7).
 * The publisher, the webhook consumer and the docs for EventBridge subscribers
 * all use these.
 */
export const TicketEventPayloadSchemas = {
  'ticket.created': z.object({ event: z.literal('ticket.created'), truncated, timestamp, data: z.object({ ticket: TicketSchema }) }).meta({ id: 'TicketCreatedEvent' }),
  'ticket.resolved': z.object({ event: z.literal('ticket.resolved'), truncated, timestamp, data: z.object({ ticket: TicketSchema }) }).meta({ id: 'TicketResolvedEvent' }),
  'ticket.updated': z
    .object({ event: z.literal('ticket.updated'), truncated, timestamp, data: z.object({ ticket: z.object({ id: z.string(), updatedFields: z.record(z.string(), change) }) }) })
    .meta({ id: 'TicketUpdatedEvent' }),
  'ticket.assignment.changed': z
    .object({
      event: z.literal('ticket.assignment.changed'),
      truncated,
      timestamp,
      data: z.object({ ticket: z.object({ id: z.string(), updatedFields: z.object({ assigneeId: z.object({ from: z.string().nullable(), to: z.string().nullable() }) }) }) }),
    })
    .meta({ id: 'TicketAssignmentChangedEvent' }),
  'ticket.deleted': z.object({ event: z.literal('ticket.deleted'), truncated, timestamp, data: z.object({ ticket: z.object({ id: z.string() }) }) }).meta({ id: 'TicketDeletedEvent' }),
  'ticket.merged': z
    .object({
      event: z.literal('ticket.merged'),
      truncated,
      timestamp,
      data: z.object({
        ticket: z.object({ id: z.string().describe('The target: the ticket merged into'), sourceId: z.string().describe('The source: now closed, with mergedInto the target, its messages moved') }),
      }),
    })
    .meta({ id: 'TicketMergedEvent' }),
  // decisions §24: a rating given or changed on the survey page.
  'ticket.rated': z
    .object({
      event: z.literal('ticket.rated'),
      truncated,
      timestamp,
      data: z.object({
        id: z.string().describe('The ticket'),
        rating: SatisfactionRatingSchema.extend({
          id: z.string().describe("Prefixed csat_: the ticket's one rating"),
          ticketId: z.string().describe('The ticket, as data.id (the rating as GET /v1/satisfaction_ratings lists it)'),
          assigneeId: z.string().nullable().describe("The ticket's assignee when rated"),
          groupId: z.string().nullable().describe("The ticket's group when rated"),
        }),
      }),
    })
    .meta({ id: 'TicketRatedEvent' }),
} as const;

export const TicketEventPayloadSchema = z.discriminatedUnion('event', Object.values(TicketEventPayloadSchemas) as unknown as [z.ZodObject, ...z.ZodObject[]]);
export type TicketEventPayload = z.infer<(typeof TicketEventPayloadSchemas)[TicketEventType]>;

/**
 * EventBridge `detail` of a ticket event: the webhook payload plus the
 * account, the event's own id (`evt_...`, stable across retries) and, on
 * changes to an existing ticket, who acted (`actor`; not part of the webhook body).
 */
export const EventActorSchema = z
  .object({ type: z.enum(['user', 'automation']), id: z.string() })
  .describe('Who made the change: a user (API key or session) or an automation. Automations skip events an automation caused, so they never loop.');

export const TicketEventDetailSchema = z
  .object({
    eventId: z.string(),
    accountId: z.string(),
    correlationId: z.string().optional(),
    event: z.enum(TICKET_EVENT_TYPES),
    truncated,
    timestamp,
    data: z.record(z.string(), z.unknown()),
    actor: EventActorSchema.optional(),
  })
  .meta({ id: 'TicketEventDetail' });
export type TicketEventDetail = z.infer<typeof TicketEventDetailSchema>;

/**
 * A ticket event of these types as a consumer that acts on the ticket by its
 * id reads it (SLA state, attachment clean-up): every ticket event's data
 * names the ticket, truncated or not; the rest of `data` is not read.
 */
export const ticketRefDetailSchema = <const T extends TicketEventType>(types: readonly [T, ...T[]]) =>
  TicketEventDetailSchema.extend({ event: z.enum(types), data: z.object({ ticket: z.object({ id: z.string() }) }) });

/**
 * decisions §7's last resort: an event that cannot fit even with every long
 * value cut to 64 characters keeps only the ticket id (with truncated: true).
 */
const idOnly = z.object({ ticket: z.object({ id: z.string() }) }).describe('Last resort of the size bound (truncated: true): only the ticket id; fetch the ticket');

/**
 * The EventBridge `detail` of each ticket event type: the detail envelope with
 * that type's `data` (the webhook payload's), as the schema registry, the
 * OpenAPI document and docs/events.md publish it (app/event-catalog.ts).
 */
export const TicketEventDetailSchemas = Object.fromEntries(
  TICKET_EVENT_TYPES.map((type) => {
    const data = TicketEventPayloadSchemas[type].shape.data;
    const id = z.globalRegistry.get(TicketEventPayloadSchemas[type])!.id!.replace(/Event$/, 'EventDetail');
    return [type, TicketEventDetailSchema.extend({ event: z.literal(type), data: type === 'ticket.deleted' || type === 'ticket.rated' ? data : z.union([data, idOnly]) }).meta({ id })];
  }),
) as unknown as Record<TicketEventType, z.ZodType>;
