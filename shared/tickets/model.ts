import * as z from 'zod';
import { plainText } from '../text.ts';
import { searchParam } from '../search/words.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';

export * from './resource.ts';

/** decisions §6: one token of 1-64 characters (code points, so an emoji is one), no whitespace or commas, kept as given. */
const tag = z
  .string()
  .regex(/^[^\s,]+$/u, 'tags are 1-64 characters without whitespace or commas')
  .refine((t) => [...t].length <= 64, 'tags are at most 64 characters');
/** Duplicates are dropped keeping the first; at most 100 distinct tags per ticket (the raw list is bounded too). */
const tags = z
  .array(tag)
  .max(1000)
  .transform((t) => [...new Set(t)])
  .refine((t) => t.length <= 100, 'at most 100 distinct tags per ticket');
const customFields = z.array(z.object({ id: z.string().min(1).max(64), value: z.unknown() })).max(200);

const ticketInput = {
  subject: plainText(255),
  status: z.enum(TICKET_STATUSES),
  priority: z.enum(TICKET_PRIORITIES),
  type: z.enum(TICKET_TYPES),
  requesterEmail: z.email().max(254).nullable(),
  requesterName: plainText(128).nullable(),
  assigneeId: z.string().min(1).max(64).nullable(),
  groupId: z.string().min(1).max(64).nullable(),
  tags,
  customFields,
};

export const CreateTicketBodySchema = z
  .object({
    ticket: z.object({
      ...ticketInput,
      status: ticketInput.status.default('new'),
      priority: ticketInput.priority.default('normal'),
      type: ticketInput.type.default('question'),
      requesterEmail: ticketInput.requesterEmail.optional(),
      requesterName: ticketInput.requesterName.optional(),
      assigneeId: ticketInput.assigneeId.optional(),
      groupId: ticketInput.groupId.optional(),
      tags: tags.default([]),
      customFields: customFields.optional(),
    }),
  })
  .meta({ id: 'CreateTicketRequest' });
export type CreateTicketInput = z.infer<typeof CreateTicketBodySchema>['ticket'];

export const UpdateTicketBodySchema = z
  .object({ ticket: z.object(ticketInput).partial() })
  .meta({ id: 'UpdateTicketRequest', description: 'Only the given fields change; customFields entries merge by id (a null value clears one).' });
export type UpdateTicketInput = z.infer<typeof UpdateTicketBodySchema>['ticket'];

export const ListTicketsQuerySchema = z.object({
  status: z.enum(TICKET_STATUSES).optional(),
  priority: z.enum(TICKET_PRIORITIES).optional(),
  assignee_id: z.string().min(1).max(64).optional(),
  search: searchParam(256).describe('Word prefixes over the subject, the requester name and email, tags and the id, ignoring case and accents (decisions §16); several terms must all match'),
  page_size: z.coerce.number().int().min(1).max(100).default(25),
  after: z.string().min(1).max(4096).optional(),
  sort_by: z.enum(['created_at', 'updated_at', 'status', 'priority']).default('created_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
});
export type ListTicketsQuery = z.infer<typeof ListTicketsQuerySchema>;

export const TicketIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
