import * as z from 'zod';
import { domainEventDetail } from '../events/detail.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_DELETED } from './events.ts';

/**
 * The EventBridge `detail` of organization events (the names stay in
 * events.ts, so routing and the consumer do not build these at import).
 */
const organizationRef = z.object({ id: z.string().describe('Prefixed org_'), organizationalDomain: z.string() });

/** organization.created: POST organizations. */
export const OrganizationCreatedDetailSchema = domainEventDetail(ORGANIZATION_CREATED, z.object({ organization: organizationRef })).meta({ id: 'OrganizationCreatedEventDetail' });

/** organization.deleted: DELETE organizations, and again by its consumer while contacts remain linked (the same data). */
export const OrganizationDeletedDetailSchema = domainEventDetail(ORGANIZATION_DELETED, z.object({ organization: organizationRef.extend({ organizationalDomain: z.string().optional() }) })).meta({
  id: 'OrganizationDeletedEventDetail',
});

/** What the enrichment queue receives (rules organization-created-to-enrichment, organization-deleted-to-unlink). */
export const OrganizationEventDetailSchema = z.discriminatedUnion('event', [OrganizationCreatedDetailSchema, OrganizationDeletedDetailSchema]);
