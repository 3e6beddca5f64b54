/** EventBridge source of organization events; organization.created drives background enrichment, organization.deleted the unlinking of its contacts. */
export const ORGANIZATION_EVENT_SOURCE = 'support-desk.organizations';
export const ORGANIZATION_CREATED = 'organization.created';
export const ORGANIZATION_DELETED = 'organization.deleted';
