import * as z from '../zod.ts';
import { TICKET_EVENT_TYPES, type TicketEventType } from './event-names.ts';
import { TicketEventDetailSchema, timestamp, truncated } from './events.ts';
import { SatisfactionRatingSchema, TicketSchema } from './resource.ts';

/*
 * The published shape of each ticket event, for the docs: the OpenAPI document, the schema registry and
 * docs/events.md (app/event-catalog.ts). Apart from events.ts, which the consumers import to read an event's detail:
 * a consumer's cold start does not build the ticket resource's schemas for these.
 */

const change = z.object({ from: z.unknown(), to: z.unknown() });

/**
 * Webhook payloads, one schema per event type (api-spec "Events", decisions §7),
 * as the OpenAPI document's webhooks and the tests' checks of every delivered
 * body use them.
 */
export const TicketEventPayloadSchemas = {
  'ticket.created': z.meta(z.object({ event: z.literal('ticket.created'), truncated, timestamp, data: z.object({ ticket: TicketSchema }) }), { id: 'TicketCreatedEvent' }),
  'ticket.resolved': z.meta(z.object({ event: z.literal('ticket.resolved'), truncated, timestamp, data: z.object({ ticket: TicketSchema }) }), { id: 'TicketResolvedEvent' }),
  'ticket.updated': z.meta(
    z.object({ event: z.literal('ticket.updated'), truncated, timestamp, data: z.object({ ticket: z.object({ id: z.string(), updatedFields: z.record(z.string(), change) }) }) }),
    { id: 'TicketUpdatedEvent' },
  ),
  'ticket.assignment.changed': z.meta(
    z.object({
      event: z.literal('ticket.assignment.changed'),
      truncated,
      timestamp,
      data: z.object({ ticket: z.object({ id: z.string(), updatedFields: z.object({ assigneeId: z.object({ from: z.nullable(z.string()), to: z.nullable(z.string()) }) }) }) }),
    }),
    { id: 'TicketAssignmentChangedEvent' },
  ),
  'ticket.deleted': z.meta(z.object({ event: z.literal('ticket.deleted'), truncated, timestamp, data: z.object({ ticket: z.object({ id: z.string() }) }) }), { id: 'TicketDeletedEvent' }),
  'ticket.merged': z.meta(
    z.object({
      event: z.literal('ticket.merged'),
      truncated,
      timestamp,
      data: z.object({
        ticket: z.object({
          id: z.describe(z.string(), 'The target: the ticket merged into'),
          sourceId: z.describe(z.string(), 'The source: now closed, with mergedInto the target, its messages moved'),
        }),
      }),
    }),
    { id: 'TicketMergedEvent' },
  ),
  // decisions §24: a rating given or changed on the survey page.
  'ticket.rated': z.meta(
    z.object({
      event: z.literal('ticket.rated'),
      truncated,
      timestamp,
      data: z.object({
        id: z.describe(z.string(), 'The ticket'),
        rating: z.extend(SatisfactionRatingSchema, {
          id: z.describe(z.string(), "Prefixed csat_: the ticket's one rating"),
          ticketId: z.describe(z.string(), 'The ticket, as data.id (the rating as GET /v1/satisfaction_ratings lists it)'),
          assigneeId: z.describe(z.nullable(z.string()), "The ticket's assignee when rated"),
          groupId: z.describe(z.nullable(z.string()), "The ticket's group when rated"),
        }),
      }),
    }),
    { id: 'TicketRatedEvent' },
  ),
} as const;

export const TicketEventPayloadSchema = z.discriminatedUnion('event', Object.values(TicketEventPayloadSchemas) as unknown as [z.ZodMiniObject, ...z.ZodMiniObject[]]);
export type TicketEventPayload = z.infer<(typeof TicketEventPayloadSchemas)[TicketEventType]>;

/**
 * decisions §7's last resort: an event that cannot fit even with every long
 * value cut to 64 characters keeps only the ticket id (with truncated: true).
 */
const idOnly = z.describe(z.object({ ticket: z.object({ id: z.string() }) }), 'Last resort of the size bound (truncated: true): only the ticket id; fetch the ticket');

/**
 * The EventBridge `detail` of each ticket event type: the detail envelope with
 * that type's `data` (the webhook payload's), as the schema registry, the
 * OpenAPI document and docs/events.md publish it (app/event-catalog.ts).
 */
export const TicketEventDetailSchemas = Object.fromEntries(
  TICKET_EVENT_TYPES.map((type) => {
    const data = TicketEventPayloadSchemas[type].shape.data;
    const id = z.globalRegistry.get(TicketEventPayloadSchemas[type])!.id!.replace(/Event$/, 'EventDetail');
    return [type, z.meta(z.extend(TicketEventDetailSchema, { event: z.literal(type), data: type === 'ticket.deleted' || type === 'ticket.rated' ? data : z.union([data, idOnly]) }), { id })];
  }),
) as unknown as Record<TicketEventType, z.ZodMiniType>;
