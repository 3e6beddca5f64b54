/**
 * The organization resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from 'zod';

export const OrganizationSchema = z
  .object({
    id: z.string().describe('Prefixed org_'),
    name: z.string().nullable(),
    organizationalDomain: z.string(),
    country: z.string().nullable(),
    industry: z.string().nullable(),
    employeeCount: z.string().nullable(),
    yearlyRevenue: z.string().nullable(),
    logoUrl: z.string().nullable(),
    contactCount: z.number().int(),
    ticketCount: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Organization' });
export type Organization = z.infer<typeof OrganizationSchema>;
