import * as z from '../zod.ts';
import { searchParam } from '../search/words.ts';
import { plainText } from '../text.ts';
import { pageParams } from '../pagination/numbered.ts';

export * from './resource.ts';

/** decisions §11: a host name, stored lowercased; no scheme, path, spaces or empty labels. */
export const domainSchema = z.meta(
  z.pipe(
    z
      .string()
      .check(
        z.trim(),
        z.maxLength(128),
        z.regex(/^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'must be a host name such as acme.com (no scheme, path or spaces)'),
      ),
    z.transform((d) => d.toLowerCase()),
  ),
  { format: 'hostname' },
);

const text = (max: number) => z.nullable(plainText(max));
const enrichmentFields = {
  country: z.optional(text(128)),
  industry: z.optional(text(128)),
  employeeCount: z.optional(text(64)),
  yearlyRevenue: z.optional(text(64)),
  logoUrl: z.optional(z.nullable(z.url({ protocol: /^https?$/ }).check(z.maxLength(2048)))),
};

export const CreateOrganizationBodySchema = z.meta(z.object({ name: z.optional(text(128)), organizationalDomain: domainSchema }), { id: 'CreateOrganizationRequest' });
export type CreateOrganizationInput = z.infer<typeof CreateOrganizationBodySchema>;

export const UpdateOrganizationBodySchema = z.meta(z.object({ name: z.optional(text(128)), organizationalDomain: z.optional(domainSchema), ...enrichmentFields }), {
  id: 'UpdateOrganizationRequest',
  description: 'All fields optional; enrichment fields may be corrected by hand.',
});
export type UpdateOrganizationInput = z.infer<typeof UpdateOrganizationBodySchema>;

export const ListOrganizationsQuerySchema = z.object({
  search: searchParam(128),
  sort_by: z._default(z.enum(['name', 'organizational_domain', 'created_at', 'contact_count']), 'created_at'),
  sort_order: z._default(z.enum(['asc', 'desc']), 'desc'),
  ...pageParams(15),
});
export type ListOrganizationsQuery = z.infer<typeof ListOrganizationsQuerySchema>;

export const OrganizationParamsSchema = z.object({ organizationId: z.string().check(z.minLength(1), z.maxLength(64)) });

/** Company facts an enrichment provider can supply (decisions §11). */
export interface CompanyFacts {
  name?: string | null;
  country?: string | null;
  industry?: string | null;
  employeeCount?: string | null;
  yearlyRevenue?: string | null;
  logoUrl?: string | null;
}
