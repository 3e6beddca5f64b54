import * as z from 'zod';
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
