import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope, listEnvelope } from '../pagination/numbered.ts';
import { CreateOrganizationBodySchema, ListOrganizationsQuerySchema, OrganizationParamsSchema, OrganizationSchema, UpdateOrganizationBodySchema } from './model.ts';

const BASE = '/helpdesk/api/organizations';
const OrganizationResponse = dataEnvelope(OrganizationSchema, 'OrganizationResponse');

/** Organizations (api-spec "Organization endpoints"; decisions §11). Reads need viewer, writes agent. */
export const organizationRoutes = defineRoutes([
  {
    operationId: 'listOrganizations',
    method: 'GET',
    path: BASE,
    group: 'organizations',
    summary: 'List organizations',
    description:
      'search matches name or domain; sort_by name|organizational_domain|created_at|contact_count; page/limit with meta.total. Unfiltered, total comes from a counter kept with every create and delete; with search it counts matches among the first 10,000 organizations in the requested order (a lower bound beyond). A page reads the list only as far as its own last item.',
    access: 'viewer',
    query: ListOrganizationsQuerySchema,
    success: { status: 200, description: 'A page of organizations', schema: listEnvelope(OrganizationSchema, 'OrganizationList') },
    errors: [400, 403],
  },
  {
    operationId: 'getOrganization',
    method: 'GET',
    path: `${BASE}/{organizationId}`,
    group: 'organizations',
    summary: 'Get an organization',
    access: 'viewer',
    params: OrganizationParamsSchema,
    success: { status: 200, description: 'The organization', schema: OrganizationResponse },
    errors: [403, 404],
  },
  {
    operationId: 'createOrganization',
    method: 'POST',
    path: BASE,
    group: 'organizations',
    summary: 'Create an organization',
    description: 'organizationalDomain is a host name, stored lowercased, unique per account (409 CONFLICT). Enrichment then runs in the background.',
    access: 'agent',
    body: CreateOrganizationBodySchema,
    success: { status: 201, description: 'The created organization', schema: OrganizationResponse },
    errors: [400, 403, 409, 422],
  },
  {
    operationId: 'updateOrganization',
    method: 'PATCH',
    path: `${BASE}/{organizationId}`,
    group: 'organizations',
    summary: 'Update an organization',
    access: 'agent',
    params: OrganizationParamsSchema,
    body: UpdateOrganizationBodySchema,
    success: { status: 200, description: 'The updated organization', schema: OrganizationResponse },
    errors: [400, 403, 404, 409, 422],
  },
  {
    operationId: 'enrichOrganization',
    method: 'POST',
    path: `${BASE}/{organizationId}/enrich`,
    group: 'organizations',
    summary: 'Enrich an organization now',
    description: 'Fills empty company fields from the configured provider and answers the updated organization. With no provider or no data, nothing changes.',
    access: 'agent',
    params: OrganizationParamsSchema,
    success: { status: 200, description: 'The organization after enrichment', schema: OrganizationResponse },
    errors: [403, 404],
  },
  {
    operationId: 'deleteOrganization',
    method: 'DELETE',
    path: `${BASE}/{organizationId}`,
    group: 'organizations',
    summary: 'Delete an organization',
    description: 'Linked contacts get organizationId null.',
    access: 'agent',
    params: OrganizationParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404],
  },
]);
