import * as z from '../zod.ts';
import { ContactSchema } from '../contacts/resource.ts';
import { EXPORT_PAGE_MAX, exportPageSchema, ExportQuerySchema } from '../exports/model.ts';
import { defineRoutes } from '../http/contract.ts';
import { OrganizationSchema } from '../organizations/resource.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { UserSchema } from '../users/resource.ts';
import { AccountAuditsQuerySchema, AuditListSchema, AuditTicketParamsSchema, TicketAuditsQuerySchema } from '../audits/model.ts';

const V1 = '/helpdesk/api/v1';

const EXPORT_DESCRIPTION = `Incremental export (decisions §15): the first call takes start_time (ISO 8601), every later one the cursor of the one before. Changes come in order of updatedAt then id, at most ${EXPORT_PAGE_MAX.toLocaleString('en-US')} a page, each record at its state when read (GET's shape) or a tombstone ({id, updatedAt, deleted: true}) for a delete, kept 30 days. Changes of the last 10 seconds are held back until settled, so a client that follows cursor until endOfStream and later resumes from the last cursor sees every change at least once. The cursor is bound to the account and the resource and works for 30 days. Admin or above; counts against the rate limit like any request.`;

const exportRoute = <const Id extends string>(operationId: Id, resource: string, object: z.ZodMiniType, schemaId: string) =>
  ({
    operationId,
    method: 'GET',
    path: `${V1}/exports/${resource}`,
    group: 'history',
    summary: `Export ${resource} incrementally`,
    description: EXPORT_DESCRIPTION,
    access: 'admin',
    query: ExportQuerySchema,
    success: { status: 200, description: `A page of ${resource} changes`, schema: exportPageSchema(object, schemaId) },
    errors: [400, 403],
  }) as const;

/** Ticket history, the account's audit log and the incremental export (decisions §15). */
export const historyRoutes = defineRoutes([
  {
    operationId: 'listTicketAudits',
    method: 'GET',
    path: `${V1}/tickets/{id}/audits`,
    group: 'history',
    summary: "List a ticket's audits",
    description:
      "Every committed change of the ticket: who (actor), how (via: api, message, automation, email, bulk, sla, distribution) and what (changes, custom fields as customFields.<fieldKey>); a message added to the ticket is an audit with its messageId. Oldest first (sort_order=desc for newest first), cursor pages via links.next. A deleted ticket's audits stay readable here by admins.",
    access: 'viewer',
    params: AuditTicketParamsSchema,
    query: TicketAuditsQuerySchema,
    success: { status: 200, description: "A page of the ticket's audits", schema: AuditListSchema },
    errors: [400, 403, 404],
  },
  {
    operationId: 'listAudits',
    method: 'GET',
    path: `${V1}/audits`,
    group: 'history',
    summary: "List the account's audit log",
    description:
      "Every audit of the account (tickets and settings: users, API keys, webhooks, automations, SLA policies, groups, ticket fields, the plan) in commit order. Filters resource_type (with resource_id for one resource), actor_id, since and until (ISO 8601, inclusive). Secrets never appear, only their ids. Kept for the stage's auditRetentionDays (default 365). Admin or above.",
    access: 'admin',
    query: AccountAuditsQuerySchema,
    success: { status: 200, description: 'A page of the audit log', schema: AuditListSchema },
    errors: [400, 403],
  },
  exportRoute('exportTickets', 'tickets', TicketSchema, 'TicketExportPage'),
  exportRoute('exportContacts', 'contacts', ContactSchema, 'ContactExportPage'),
  exportRoute('exportOrganizations', 'organizations', OrganizationSchema, 'OrganizationExportPage'),
  exportRoute('exportUsers', 'users', UserSchema, 'UserExportPage'),
]);
