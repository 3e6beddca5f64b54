/**
 * The contact resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from '../zod.ts';

export const ContactSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed con_'),
    name: z.string(),
    email: z.string(),
    organizationId: z.nullable(z.string()),
    organizationName: z.nullable(z.string()),
    notes: z.nullable(z.string()),
    ticketCount: z.describe(z.number().check(z.int()), "Tickets whose requesterEmail is this contact's email"),
    createdAt: z.iso.datetime(),
  }),
  { id: 'Contact' },
);
export type Contact = z.infer<typeof ContactSchema>;
