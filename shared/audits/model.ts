import * as z from '../zod.ts';
import { LinksSchema, PageMetaSchema } from '../pagination/cursor-page.ts';

/** What an audit can be about (decisions §15): tickets, the account's settings (views and macros, §21-§22, among them), and a contact's erasure (§23). */
export const AUDIT_RESOURCE_TYPES = ['ticket', 'user', 'api_key', 'webhook', 'automation', 'sla_policy', 'group', 'ticket_field', 'account', 'contact', 'view', 'macro'] as const;
export type AuditResourceType = (typeof AUDIT_RESOURCE_TYPES)[number];

/**
 * How the change came: the API, a message's ticket_update, an automation, inbound email, a bulk job, SLA, group
 * distribution, a merge, the survey page, or privacy (§23): a message's redaction, a contact's erasure, the retention sweep, a macro.
 */
export const AUDIT_VIAS = ['api', 'message', 'automation', 'email', 'bulk', 'sla', 'distribution', 'merge', 'satisfaction', 'redaction', 'erasure', 'retention', 'macro'] as const;
export type AuditVia = (typeof AUDIT_VIAS)[number];

export const ACTOR_TYPES = ['user', 'automation', 'system', 'email', 'requester', 'macro'] as const;

export const AuditActorSchema = z.object({
  type: z.describe(
    z.enum(ACTOR_TYPES),
    "user: a user of the account (API key or session); automation: an automation rule; system: the service itself (distribution, the admin CLI); email: an inbound mail; requester: the ticket's requester on the survey page; macro: a macro an agent applied",
  ),
  id: z.describe(z.nullable(z.string()), 'The user, automation or macro id; null for system, email and requester'),
});
export type AuditActor = z.infer<typeof AuditActorSchema>;

export const AuditChangeSchema = z.object({
  field: z.describe(z.string(), 'The field, as the resource names it; custom fields as customFields.<fieldKey>'),
  from: z.describe(z.unknown(), 'The value before (null on create)'),
  to: z.describe(z.unknown(), 'The value after'),
  truncated: z.describe(z.optional(z.boolean()), 'Present and true when a long text value was shortened to keep the audit small; read the resource for the full value'),
});
export type AuditChange = z.infer<typeof AuditChangeSchema>;

export const AuditSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed aud_'),
    createdAt: z.iso.datetime(),
    resource: z.object({ type: z.enum(AUDIT_RESOURCE_TYPES), id: z.string() }),
    actor: AuditActorSchema,
    via: z.enum(AUDIT_VIAS),
    changes: z.describe(z.array(AuditChangeSchema), 'A create lists every set field with from null; a delete lists none'),
    messageId: z.describe(z.nullable(z.string()), 'The message that came with the change (a message added to a ticket), or null'),
    deleted: z.describe(z.boolean(), 'True on the audit of a delete'),
  }),
  { id: 'Audit' },
);
export type Audit = z.infer<typeof AuditSchema>;

export const AuditListSchema = z.meta(z.object({ audits: z.array(AuditSchema), meta: PageMetaSchema, links: LinksSchema }), { id: 'AuditList' });

const pageSize = z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 25);
const after = z.optional(z.string().check(z.minLength(1), z.maxLength(4096)));

export const TicketAuditsQuerySchema = z.object({
  page_size: pageSize,
  sort_order: z.describe(z._default(z.enum(['asc', 'desc']), 'asc'), 'asc: oldest first (default); desc: newest first'),
  after,
});
export type TicketAuditsQuery = z.infer<typeof TicketAuditsQuerySchema>;

const instant = z.pipe(
  z.iso.datetime({ offset: true }),
  z.transform((v) => new Date(v).toISOString()),
);

export const AccountAuditsQuerySchema = z
  .object({
    resource_type: z.optional(z.enum(AUDIT_RESOURCE_TYPES)),
    resource_id: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
    actor_id: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
    since: z.describe(z.optional(instant), 'ISO 8601: audits created at or after'),
    until: z.describe(z.optional(instant), 'ISO 8601: audits created at or before'),
    page_size: pageSize,
    after,
  })
  .check(
    z.refine((q) => !q.resource_id || q.resource_type, { message: 'resource_id needs resource_type', path: ['resource_id'] }),
    z.refine((q) => !q.since || !q.until || q.since <= q.until, { message: 'since must not be after until', path: ['since'] }),
  );
export type AccountAuditsQuery = z.infer<typeof AccountAuditsQuerySchema>;

export const AuditTicketParamsSchema = z.object({ id: z.string().check(z.minLength(1), z.maxLength(64)) });
