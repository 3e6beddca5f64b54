import { httpGroup } from '#shared/http/middleware.ts';
import { organizationRoutes } from '#shared/organizations/contract.ts';
import { unlinkOrganizationContacts } from '#shared/contacts/organization-unlink.ts';
import * as orgs from '#shared/organizations/service.ts';
import { pageMeta } from '#shared/pagination/numbered.ts';

const { toOrganizationDto } = orgs;
const one = (o: Parameters<typeof toOrganizationDto>[0]) => ({ success: true, data: toOrganizationDto(o) });

export const handler = httpGroup(organizationRoutes, {
  listOrganizations: async ({ principal, query }) => {
    const page = await orgs.listOrganizations(principal, query);
    return { success: true, data: page.items.map(toOrganizationDto), meta: pageMeta(query.page, query.limit, page.total) };
  },
  getOrganization: async ({ principal, params }) => one(await orgs.getOrganization(principal, params.organizationId)),
  createOrganization: async ({ principal, body }) => one(await orgs.createOrganization(principal, body, { answer: one })),
  updateOrganization: async ({ principal, params, body }) => one(await orgs.updateOrganization(principal, params.organizationId, body)),
  enrichOrganization: async ({ principal, params }) => one(await orgs.enrichOrganization(principal.accountId, params.organizationId)),
  deleteOrganization: async ({ principal, params }) => orgs.deleteOrganization(principal, params.organizationId, unlinkOrganizationContacts),
});
