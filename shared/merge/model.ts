import * as z from '../zod.ts';
import { TicketIdParamsSchema } from '../tickets/model.ts';

/** Most source tickets one merge takes (decisions §20), duplicates included. */
export const MAX_MERGE_IDS = 25;

/** A merge note as a message's content: HTML, sanitized as a message's is (decisions §12). */
const comment = z.string().check(z.minLength(1), z.maxLength(100_000));

export const MergeBodySchema = z.meta(
  z.object({
    ids: z.describe(
      z.array(TicketIdParamsSchema.shape.id).check(z.minLength(1), z.maxLength(MAX_MERGE_IDS)),
      `1-${MAX_MERGE_IDS} source ticket ids, merged into the target in this order; a repeated id counts once. The target itself is refused (422 naming ids)`,
    ),
    targetComment: z.describe(
      z.optional(comment),
      'The note the target gets for each source (HTML, sanitized); by default "Merged tkt_… into this ticket", naming the source\'s requester when it differs',
    ),
    sourceComment: z.describe(z.optional(comment), 'The note each source keeps (HTML, sanitized); by default "Merged into tkt_…"'),
  }),
  { id: 'MergeTicketsRequest' },
);
export type MergeBody = z.infer<typeof MergeBodySchema>;

/** What a merge job keeps beside its source ids (the job's `input`). */
export interface MergeInput {
  targetId: string;
  targetComment: string | null;
  sourceComment: string | null;
}
