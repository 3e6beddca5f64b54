import * as z from '../zod.ts';
import { TicketIdParamsSchema, UpdateTicketBodySchema } from '../tickets/model.ts';

/** Most ticket ids a bulk request takes (decisions §16), duplicates included. */
export const MAX_BULK_IDS = 100;

const ticketIds = z.describe(
  z.array(TicketIdParamsSchema.shape.id).check(z.minLength(1), z.maxLength(MAX_BULK_IDS)),
  `1-${MAX_BULK_IDS} ticket ids; a repeated id counts once, an id the account does not have fails as NOT_FOUND in the job's results`,
);

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
    tags: z.describe(put.tags, 'Replaces every tag of each ticket'),
    addTags: z.describe(put.tags, "Added to each ticket's tags (those it already has stay once)"),
    removeTags: z.describe(put.tags, "Removed from each ticket's tags"),
  })
  .check(
    z.refine((t) => BULK_FIELDS.some((f) => t[f] !== undefined), { message: `give at least one of ${BULK_FIELDS.join(', ')}` }),
    z.refine((t) => t.tags === undefined || (t.addTags === undefined && t.removeTags === undefined), { message: 'tags replaces the tags: give it alone, or addTags/removeTags', path: ['tags'] }),
    z.refine((t) => !t.addTags?.some((tag) => t.removeTags?.includes(tag)), { message: 'a tag cannot be both added and removed', path: ['removeTags'] }),
  );
export type BulkTicketChange = z.infer<typeof BulkTicketChangeSchema>;

export const BulkUpdateBodySchema = z.meta(z.object({ ids: ticketIds, ticket: BulkTicketChangeSchema }), {
  id: 'BulkUpdateTicketsRequest',
  description: 'Each ticket is changed as a PUT of these fields would change it; addTags/removeTags edit the tags each ticket has when it is changed.',
});
export type BulkUpdateInput = z.infer<typeof BulkUpdateBodySchema>;

export const BulkDeleteBodySchema = z.meta(z.object({ ids: ticketIds }), { id: 'BulkDeleteTicketsRequest' });
export type BulkDeleteInput = z.infer<typeof BulkDeleteBodySchema>;
