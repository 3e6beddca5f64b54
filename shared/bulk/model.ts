import * as z from 'zod';
import { TicketIdParamsSchema, UpdateTicketBodySchema } from '../tickets/model.ts';

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
