/**
 * The organization resource as the API answers it: what the history and export routes
 * and the docs need, without the request schemas (model.ts, which re-exports
 * it).
 */
import * as z from '../zod.ts';

export const OrganizationSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed org_'),
    name: z.nullable(z.string()),
    organizationalDomain: z.string(),
    country: z.nullable(z.string()),
    industry: z.nullable(z.string()),
    employeeCount: z.nullable(z.string()),
    yearlyRevenue: z.nullable(z.string()),
    logoUrl: z.nullable(z.string()),
    contactCount: z.number().check(z.int()),
    ticketCount: z.number().check(z.int()),
    createdAt: z.iso.datetime(),
  }),
  { id: 'Organization' },
);
export type Organization = z.infer<typeof OrganizationSchema>;
