/**
 * The ticket resource as the API answers it and its events carry it: what consumers
 * parse and the docs publish, without the request schemas (model.ts, which
 * re-exports these). A consumer's cold start builds these only.
 */
import * as z from '../zod.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';

export const CustomFieldValueSchema = z.object({ id: z.string(), value: z.unknown() });

export const SATISFACTION_SCORES = ['good', 'bad'] as const;
export type SatisfactionScore = (typeof SATISFACTION_SCORES)[number];

/** The requester's answer to the survey mail (decisions §24); a later click changes it. */
export const SatisfactionRatingSchema = z.meta(
  z.object({
    score: z.enum(SATISFACTION_SCORES),
    comment: z.describe(z.nullable(z.string()), 'What the requester wrote on the page (up to 2,000 characters), or null'),
    ratedAt: z.describe(z.iso.datetime(), 'When the score or comment was last given'),
  }),
  { id: 'TicketSatisfactionRating' },
);
export type TicketSatisfactionRating = z.infer<typeof SatisfactionRatingSchema>;

/** The ticket resource (api-spec "Ticket"), as answered and as carried by events. */
export const TicketSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed tkt_'),
    subject: z.string(),
    status: z.enum(TICKET_STATUSES),
    priority: z.enum(TICKET_PRIORITIES),
    type: z.enum(TICKET_TYPES),
    assigneeId: z.nullable(z.string()),
    requesterEmail: z.nullable(z.string()),
    requesterName: z.nullable(z.string()),
    groupId: z.nullable(z.string()),
    tags: z.array(z.string()),
    customFields: z.array(CustomFieldValueSchema),
    mergedInto: z.describe(z.nullable(z.string()), 'The ticket this one was merged into (decisions §20): it is then closed and its messages are there; null otherwise'),
    satisfactionRating: z.describe(z.nullable(SatisfactionRatingSchema), "The requester's survey answer (decisions §24), or null"),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  }),
  { id: 'Ticket' },
);
export type Ticket = z.infer<typeof TicketSchema>;
