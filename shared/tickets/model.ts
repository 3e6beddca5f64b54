import * as z from '../zod.ts';
import { plainText } from '../text.ts';
import { searchParam } from '../search/words.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';

export * from './resource.ts';

/** decisions §6: one token of 1-64 characters (code points, so an emoji is one), no whitespace or commas, kept as given. */
const tag = z.string().check(
  z.regex(/^[^\s,]+$/u, 'tags are 1-64 characters without whitespace or commas'),
  z.refine((t) => [...t].length <= 64, 'tags are at most 64 characters'),
);
/** Duplicates are dropped keeping the first; at most 100 distinct tags per ticket (the raw list is bounded too). */
const tags = z
  .pipe(
    z.array(tag).check(z.maxLength(1000)),
    z.transform((t) => [...new Set(t)]),
  )
  .check(z.refine((t) => t.length <= 100, 'at most 100 distinct tags per ticket'));
const customFields = z.array(z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)), value: z.unknown() })).check(z.maxLength(200));

const ticketInput = {
  subject: plainText(255),
  status: z.enum(TICKET_STATUSES),
  priority: z.enum(TICKET_PRIORITIES),
  type: z.enum(TICKET_TYPES),
  requesterEmail: z.nullable(z.email().check(z.maxLength(254))),
  requesterName: z.nullable(plainText(128)),
  assigneeId: z.nullable(z.string().check(z.minLength(1), z.maxLength(64))),
  groupId: z.nullable(z.string().check(z.minLength(1), z.maxLength(64))),
  tags,
  customFields,
};

export const CreateTicketBodySchema = z.meta(
  z.object({
    ticket: z.object({
      ...ticketInput,
      status: z._default(ticketInput.status, 'new'),
      priority: z._default(ticketInput.priority, 'normal'),
      type: z._default(ticketInput.type, 'question'),
      requesterEmail: z.optional(ticketInput.requesterEmail),
      requesterName: z.optional(ticketInput.requesterName),
      assigneeId: z.optional(ticketInput.assigneeId),
      groupId: z.optional(ticketInput.groupId),
      tags: z._default(tags, []),
      customFields: z.optional(customFields),
    }),
  }),
  { id: 'CreateTicketRequest' },
);
export type CreateTicketInput = z.infer<typeof CreateTicketBodySchema>['ticket'];

export const UpdateTicketBodySchema = z.meta(z.object({ ticket: z.partial(z.object(ticketInput)) }), {
  id: 'UpdateTicketRequest',
  description: 'Only the given fields change; customFields entries merge by id (a null value clears one).',
});
export type UpdateTicketInput = z.infer<typeof UpdateTicketBodySchema>['ticket'];

export const ListTicketsQuerySchema = z.object({
  status: z.optional(z.enum(TICKET_STATUSES)),
  priority: z.optional(z.enum(TICKET_PRIORITIES)),
  assignee_id: z.optional(z.string().check(z.minLength(1), z.maxLength(64))),
  search: z.describe(searchParam(256), 'Word prefixes over the subject, the requester name and email, tags and the id, ignoring case and accents (decisions §16); several terms must all match'),
  page_size: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 25),
  after: z.optional(z.string().check(z.minLength(1), z.maxLength(4096))),
  sort_by: z._default(z.enum(['created_at', 'updated_at', 'status', 'priority']), 'created_at'),
  sort_order: z._default(z.enum(['asc', 'desc']), 'desc'),
});
export type ListTicketsQuery = z.infer<typeof ListTicketsQuerySchema>;

export const TicketIdParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
