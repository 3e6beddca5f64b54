import * as z from 'zod';
import { TicketIdParamsSchema, UpdateTicketBodySchema } from '../tickets/model.ts';

export const JOB_TYPES = ['bulk_update', 'bulk_delete'] as const;
export type JobType = (typeof JOB_TYPES)[number];
export const JOB_STATUSES = ['queued', 'running', 'completed'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Most ticket ids a bulk request takes (decisions §16), duplicates included. */
export const MAX_BULK_IDS = 100;

const ticketIds = z
  .array(TicketIdParamsSchema.shape.id)
  .min(1)
  .max(MAX_BULK_IDS)
  .describe(`1-${MAX_BULK_IDS} ticket ids; a repeated id counts once, an id the account does not have fails as NOT_FOUND in the job's results`);

/** The PUT's own field schemas (shared/tickets/model.ts), so a bulk change accepts exactly what a single PUT accepts. */
const put = UpdateTicketBodySchema.shape.ticket.shape;

export const BULK_FIELDS = ['status', 'priority', 'type', 'assigneeId', 'groupId', 'tags', 'addTags', 'removeTags'] as const;

export const BulkTicketChangeSchema = z
  .object({
    status: put.status,
    priority: put.priority,
    type: put.type,
    assigneeId: put.assigneeId,
    groupId: put.groupId,
    tags: put.tags.describe('Replaces every tag of each ticket'),
    addTags: put.tags.describe("Added to each ticket's tags (those it already has stay once)"),
    removeTags: put.tags.describe("Removed from each ticket's tags"),
  })
  .refine((t) => BULK_FIELDS.some((f) => t[f] !== undefined), { message: `give at least one of ${BULK_FIELDS.join(', ')}` })
  .refine((t) => t.tags === undefined || (t.addTags === undefined && t.removeTags === undefined), { message: 'tags replaces the tags: give it alone, or addTags/removeTags', path: ['tags'] })
  .refine((t) => !t.addTags?.some((tag) => t.removeTags?.includes(tag)), { message: 'a tag cannot be both added and removed', path: ['removeTags'] });
export type BulkTicketChange = z.infer<typeof BulkTicketChangeSchema>;

export const BulkUpdateBodySchema = z
  .object({ ids: ticketIds, ticket: BulkTicketChangeSchema })
  .meta({ id: 'BulkUpdateTicketsRequest', description: 'Each ticket is changed as a PUT of these fields would change it; addTags/removeTags edit the tags each ticket has when it is changed.' });
export type BulkUpdateInput = z.infer<typeof BulkUpdateBodySchema>;

export const BulkDeleteBodySchema = z.object({ ids: ticketIds }).meta({ id: 'BulkDeleteTicketsRequest' });
export type BulkDeleteInput = z.infer<typeof BulkDeleteBodySchema>;

export const JobResultSchema = z.object({
  id: z.string().describe('The ticket id, as given'),
  status: z.enum(['ok', 'error']),
  error: z
    .object({ code: z.string(), message: z.string() })
    .optional()
    .describe('On error: the code and message a single PUT or DELETE of this ticket would have answered (NOT_FOUND, TICKET_CLOSED, VALIDATION_ERROR, …)'),
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const JobSchema = z
  .object({
    id: z.string().describe('Prefixed job_'),
    type: z.enum(JOB_TYPES),
    status: z.enum(JOB_STATUSES).describe('queued until a worker takes it, running while tickets are being changed, completed once every ticket has its result'),
    total: z.number().int().describe('Distinct ticket ids'),
    succeeded: z.number().int(),
    failed: z.number().int(),
    results: z.array(JobResultSchema).describe('One per ticket done so far, in the order the ids were given'),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'Job' });
export type Job = z.infer<typeof JobSchema>;

export const JobEnvelope = z.object({ job: JobSchema }).meta({ id: 'JobResponse' });

export const JobIdParamsSchema = z.object({ id: z.string().min(1).max(64) });
