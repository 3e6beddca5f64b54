import * as z from '../zod.ts';
import { domainEventDetail } from '../events/detail.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_DELETED } from './events.ts';

/**
 * The EventBridge `detail` of organization events (the names stay in
 * events.ts, so routing and the consumer do not build these at import).
 */
const organizationRef = z.object({ id: z.describe(z.string(), 'Prefixed org_'), organizationalDomain: z.string() });

/** organization.created: POST organizations. */
export const OrganizationCreatedDetailSchema = z.meta(domainEventDetail(ORGANIZATION_CREATED, z.object({ organization: organizationRef })), { id: 'OrganizationCreatedEventDetail' });

/** organization.deleted: DELETE organizations, and again by its consumer while contacts remain linked (the same data). */
export const OrganizationDeletedDetailSchema = z.meta(
  domainEventDetail(ORGANIZATION_DELETED, z.object({ organization: z.extend(organizationRef, { organizationalDomain: z.optional(z.string()) }) })),
  {
    id: 'OrganizationDeletedEventDetail',
  },
);

/** What the enrichment queue receives (rules organization-created-to-enrichment, organization-deleted-to-unlink). */
export const OrganizationEventDetailSchema = z.discriminatedUnion('event', [OrganizationCreatedDetailSchema, OrganizationDeletedDetailSchema]);
