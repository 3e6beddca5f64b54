/** EventBridge source of organization events; organization.created drives background enrichment. */
export const ORGANIZATION_EVENT_SOURCE = 'support-desk.organizations';
export const ORGANIZATION_CREATED = 'organization.created';
