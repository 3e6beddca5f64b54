/**
 * The contact resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from 'zod';

export const ContactSchema = z
  .object({
    id: z.string().describe('Prefixed con_'),
    name: z.string(),
    email: z.string(),
    organizationId: z.string().nullable(),
    organizationName: z.string().nullable(),
    notes: z.string().nullable(),
    ticketCount: z.number().int().describe("Tickets whose requesterEmail is this contact's email"),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Contact' });
export type Contact = z.infer<typeof ContactSchema>;
