import * as z from '#shared/zod.ts';
import { MessageCreatedDetailSchema } from '#shared/messages/event-schemas.ts';
import { MESSAGE_CREATED, MESSAGE_EVENT_SOURCE } from '#shared/messages/events.ts';
import { OrganizationCreatedDetailSchema, OrganizationDeletedDetailSchema } from '#shared/organizations/event-schemas.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_DELETED, ORGANIZATION_EVENT_SOURCE } from '#shared/organizations/events.ts';
import { SLA_BREACHED, SLA_EVENT_SOURCE, SlaBreachedDetailSchema } from '#shared/sla/events.ts';
import { WEBHOOK_DISABLED, WEBHOOK_EVENT_SOURCE, WebhookDisabledDetailSchema } from '#shared/webhooks/events.ts';
import { TicketEventDetailSchemas } from '#shared/tickets/event-payloads.ts';
import { TICKET_EVENT_SOURCE, type TicketEventType } from '#shared/tickets/events.ts';

/**
 * The events the bus publishes for subscribers, and their JSON Schemas: the one
 * generator behind the EventBridge schema registry (infra/bus-subscribers.ts),
 * the OpenAPI document (app/openapi/document.ts) and the schema table of
 * docs/events.md (`npm run docs:events`), all from the same zod schemas, so
 * the three cannot drift. Group and user events are internal work items
 * (distribution, invitation emails) and are not published.
 */

type JsonSchema = Record<string, any>;

export interface PublishedEvent {
  source: string;
  detailType: string;
  /** The registry schema's name: `<source>@<DetailType in PascalCase>`, as EventBridge names the schemas it discovers. */
  schemaName: string;
  /** When it is emitted (the schema's description). */
  emitted: string;
  /** The zod schema of the event's `detail`. */
  detail: z.ZodMiniType;
}

const pascal = (detailType: string) => detailType.replace(/(^|[.\-_])(\w)/g, (_, _sep: string, c: string) => c.toUpperCase());
const published = (source: string, detailType: string, detail: z.ZodMiniType, emitted: string): PublishedEvent => ({
  source,
  detailType,
  schemaName: `${source}@${pascal(detailType)}`,
  emitted,
  detail,
});
const ticket = (type: TicketEventType, emitted: string) => published(TICKET_EVENT_SOURCE, type, TicketEventDetailSchemas[type], emitted);

/** Every event type on the bus that subscribers may use, one registry schema each. */
export const PUBLISHED_EVENTS: readonly PublishedEvent[] = [
  ticket('ticket.created', 'A ticket was created (POST tickets): the full ticket'),
  ticket('ticket.updated', 'A ticket changed (PUT tickets, automations, group distribution): only the changed fields, from and to'),
  ticket('ticket.assignment.changed', "A ticket's assignee changed (besides ticket.updated)"),
  ticket('ticket.resolved', 'A ticket became resolved: the full ticket after the change'),
  ticket('ticket.deleted', 'A ticket was deleted: its id'),
  ticket('ticket.merged', "A ticket was merged into another (decisions §20): the target and the source, after the source's messages moved and it closed"),
  ticket('ticket.rated', "A ticket's requester rated it on the survey page, or changed the rating: the ticket's id and the rating"),
  published(MESSAGE_EVENT_SOURCE, MESSAGE_CREATED, MessageCreatedDetailSchema, 'A message (request, response or note) was added to a ticket'),
  published(ORGANIZATION_EVENT_SOURCE, ORGANIZATION_CREATED, OrganizationCreatedDetailSchema, 'An organization was created'),
  published(ORGANIZATION_EVENT_SOURCE, ORGANIZATION_DELETED, OrganizationDeletedDetailSchema, 'An organization was deleted (again by its consumer while contacts remain linked)'),
  published(SLA_EVENT_SOURCE, SLA_BREACHED, SlaBreachedDetailSchema, "A ticket's SLA metric passed its deadline: once per metric episode"),
  published(
    WEBHOOK_EVENT_SOURCE,
    WEBHOOK_DISABLED,
    WebhookDisabledDetailSchema,
    'The service switched a webhook off: 10 consecutive events exhausted their retries (failing) or its target answered 410 (gone); also emailed to the admins',
  ),
];

/** The sources of the published events: what subscribers' rules may match (bus policy) and what the archive keeps. */
export const PUBLISHED_SOURCES: readonly string[] = [...new Set(PUBLISHED_EVENTS.map((e) => e.source))];

/** Fields of the EventBridge envelope around every detail, as EventBridge delivers it to a target. */
const ENVELOPE = {
  version: { type: 'string' },
  id: { type: 'string', description: "EventBridge's id of this publication (a republish gets a new one; detail.eventId stays)" },
  'detail-type': { type: 'string' },
  source: { type: 'string' },
  account: { type: 'string' },
  time: { type: 'string', format: 'date-time' },
  region: { type: 'string' },
  resources: { type: 'array', items: { type: 'string' } },
};

/**
 * The registry schema of a published event (type JSONSchemaDraft4): the whole
 * event as a target receives it, with `x-amazon-events-source` and
 * `x-amazon-events-detail-type` as EventBridge's own schemas carry them (the
 * console and the code-binding generators read them), and `detail` from its
 * zod schema. `replay-name` is set on events a replay delivers again.
 */
export function registrySchema(e: PublishedEvent): JsonSchema {
  const { $schema: _draft, definitions, ...detail } = z.toJSONSchema(e.detail, { target: 'draft-04', io: 'output', unrepresentable: 'any' }) as JsonSchema;
  return {
    $schema: 'http://json-schema.org/draft-04/schema#',
    title: e.schemaName.slice(e.schemaName.indexOf('@') + 1),
    description: e.emitted,
    type: 'object',
    'x-amazon-events-source': e.source,
    'x-amazon-events-detail-type': e.detailType,
    required: [...Object.keys(ENVELOPE), 'detail'],
    properties: {
      ...ENVELOPE,
      'detail-type': { type: 'string', enum: [e.detailType] },
      source: { type: 'string', enum: [e.source] },
      'replay-name': { type: 'string', description: 'Set on an event a replay delivers again: the replay that sent it' },
      detail,
    },
    ...(definitions ? { definitions } : {}),
  };
}

/** A short type of a JSON Schema node, for the docs table (`Ticket`, `{id, updatedFields}`, `a \| b`). */
function shortType(node: JsonSchema | undefined, required = true): string {
  if (!node) return 'any';
  const opt = required ? '' : '?';
  if (node.$ref) return String(node.$ref).split('/').pop()! + opt;
  if (node.anyOf) return shortType(node.anyOf.find((n: JsonSchema) => n.type !== 'null')) + (node.anyOf.some((n: JsonSchema) => n.type === 'null') ? ' \\| null' : '') + opt;
  if (node.enum) return node.enum.map((v: unknown) => String(v)).join(' \\| ') + opt;
  if (node.type === 'object' && node.properties) {
    const req = new Set<string>(node.required ?? []);
    return `{${Object.keys(node.properties)
      .map((k) => (req.has(k) ? k : `${k}?`))
      .join(', ')}}${opt}`;
  }
  if (node.type === 'array') return `${shortType(node.items)}[]${opt}`;
  return `${Array.isArray(node.type) ? node.type.join(' \\| ') : (node.type ?? 'any')}${opt}`;
}

/** The `data` of an event type, one entry per field, from its schema. */
function dataSummary(e: PublishedEvent): string {
  const json = registrySchema(e);
  const detail = json.properties.detail;
  const def = detail.$ref ? json.definitions[String(detail.$ref).split('/').pop()!] : detail;
  const data = def.properties.data.anyOf?.[0] ?? def.properties.data;
  const req = new Set<string>(data.required ?? []);
  return Object.entries(data.properties as Record<string, JsonSchema>)
    .map(([k, v]) => `${k}: ${shortType(v, req.has(k))}`)
    .join(', ');
}

export const DOCS_SECTION_START = '<!-- generated by npm run docs:events from app/event-catalog.ts: do not edit -->';
export const DOCS_SECTION_END = '<!-- end of generated section -->';

/** The schema table of docs/events.md, between its markers. */
export function eventsDocSection(): string {
  const rows = PUBLISHED_EVENTS.map((e) => `| \`${e.detailType}\` | \`${e.source}\` | \`${e.schemaName}\` | ${e.emitted} | \`${dataSummary(e)}\` |`);
  return [DOCS_SECTION_START, '', '| `detail-type` | `source` | registry schema | emitted when | `detail.data` |', '| --- | --- | --- | --- | --- |', ...rows, '', DOCS_SECTION_END].join('\n');
}

/** docs/events.md with its generated section replaced by the current one. */
export function withEventsDocSection(markdown: string): string {
  const start = markdown.indexOf(DOCS_SECTION_START);
  const end = markdown.indexOf(DOCS_SECTION_END);
  if (start < 0 || end < start) throw new Error('docs/events.md has no generated schema section (its start and end markers)');
  return markdown.slice(0, start) + eventsDocSection() + markdown.slice(end + DOCS_SECTION_END.length);
}
