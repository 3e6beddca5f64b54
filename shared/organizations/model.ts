import * as z from 'zod';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { pageParams } from '../pagination/numbered.ts';

export * from './resource.ts';

/** decisions §11: a host name, stored lowercased; no scheme, path, spaces or empty labels. */
export const domainSchema = z
  .string()
  .trim()
  .max(128)
  // Checked before lowercasing, so the published schema carries the host-name rule as its pattern.
  .regex(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'must be a host name such as acme.com (no scheme, path or spaces)')
  .transform((d) => d.toLowerCase())
  .meta({ format: 'hostname' });

const text = (max: number) => plainText(max).nullable();
const enrichmentFields = {
  country: text(128).optional(),
  industry: text(128).optional(),
  employeeCount: text(64).optional(),
  yearlyRevenue: text(64).optional(),
  logoUrl: z
    .url({ protocol: /^https?$/ })
    .max(2048)
    .nullable()
    .optional(),
};

export const CreateOrganizationBodySchema = z.object({ name: text(128).optional(), organizationalDomain: domainSchema }).meta({ id: 'CreateOrganizationRequest' });
export type CreateOrganizationInput = z.infer<typeof CreateOrganizationBodySchema>;

export const UpdateOrganizationBodySchema = z
  .object({ name: text(128).optional(), organizationalDomain: domainSchema.optional(), ...enrichmentFields })
  .meta({ id: 'UpdateOrganizationRequest', description: 'All fields optional; enrichment fields may be corrected by hand.' });
export type UpdateOrganizationInput = z.infer<typeof UpdateOrganizationBodySchema>;

export const ListOrganizationsQuerySchema = z.object({
  search: searchParam(128),
  sort_by: z.enum(['name', 'organizational_domain', 'created_at', 'contact_count']).default('created_at'),
  sort_order: z.enum(['asc', 'desc']).default('desc'),
  ...pageParams(15),
});
export type ListOrganizationsQuery = z.infer<typeof ListOrganizationsQuerySchema>;

export const OrganizationParamsSchema = z.object({ organizationId: z.string().min(1).max(64) });

/** Company facts an enrichment provider can supply (decisions §11). */
export interface CompanyFacts {
  name?: string | null;
  country?: string | null;
  industry?: string | null;
  employeeCount?: string | null;
  yearlyRevenue?: string | null;
  logoUrl?: string | null;
}
