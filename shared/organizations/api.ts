/**
 * What other modules may use of organizations (contacts link to them and move
 * their counters in their own transactions). Everything else about an
 * organization's items stays behind this module's service.
 */
export {
  getOrganization as findOrganization,
  getOrganizations as findOrganizations,
  organizationCountersWrite,
  organizationExists,
  organizationIdByDomain,
  reindexOrganizations,
  StaleOrganizationError,
} from './repository.ts';
export type { OrganizationRecord } from './repository.ts';
