import { GROUP_EVENT_SOURCE, GROUP_EVENT_TYPES } from '#shared/groups/events.ts';
import { MESSAGE_CREATED, MESSAGE_EVENT_SOURCE } from '#shared/messages/events.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_DELETED, ORGANIZATION_EVENT_SOURCE } from '#shared/organizations/events.ts';
import { USER_EVENT_SOURCE, USER_INVITED } from '#shared/users/events.ts';
import { WEBHOOK_DISABLED, WEBHOOK_EVENT_SOURCE } from '#shared/webhooks/events.ts';
import { TICKET_EVENT_SOURCE, TICKET_EVENT_TYPES } from '#shared/tickets/event-names.ts';
import type { QueueName } from './topology.ts';

/**
 * Which bus events go to which queue (the rules of the event pipeline,
 * app/topology.ts): the CDK app makes one EventBridge rule of each, and the
 * local bus routes PutEvents entries by the same patterns.
 */

/** The subset of an EventBridge event pattern we use: exact matches on source and detail-type. */
export interface EventPattern {
  source: readonly string[];
  'detail-type'?: readonly string[];
}

export interface RuleDef {
  /** Rule name (suffix in AWS; the CDK app prefixes the stack name). */
  name: string;
  description: string;
  pattern: EventPattern;
  /** Target queue (a QueueDef name). */
  queue: QueueName;
}

export const RULES: readonly RuleDef[] = [
  {
    name: 'ticket-events-to-webhooks',
    description: 'Every ticket event fans out to the account webhooks subscribed to it',
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': TICKET_EVENT_TYPES },
    queue: 'webhook-fanout',
  },
  {
    name: 'message-created-to-email',
    description: 'New messages; the consumer sends email for responses with send_email',
    pattern: { source: [MESSAGE_EVENT_SOURCE], 'detail-type': [MESSAGE_CREATED] },
    queue: 'email-sender',
  },
  {
    name: 'user-invited-to-email',
    description: 'Invitations (POST /users with send_invitation) are emailed by the same sender',
    pattern: { source: [USER_EVENT_SOURCE], 'detail-type': [USER_INVITED] },
    queue: 'email-sender',
  },
  {
    name: 'webhook-disabled-to-email',
    description: "A webhook the service switched off (failing or gone) is emailed to the account's owner and admins",
    pattern: { source: [WEBHOOK_EVENT_SOURCE], 'detail-type': [WEBHOOK_DISABLED] },
    queue: 'email-sender',
  },
  {
    name: 'ticket-resolved-to-survey',
    description: "A resolved ticket's requester gets the satisfaction survey mail, when the account has it on (decisions §24)",
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': ['ticket.resolved'] },
    queue: 'email-sender',
  },
  {
    name: 'organization-created-to-enrichment',
    description: 'New organizations are enriched in the background',
    pattern: { source: [ORGANIZATION_EVENT_SOURCE], 'detail-type': [ORGANIZATION_CREATED] },
    queue: 'enrichment',
  },
  {
    name: 'ticket-events-to-automations',
    description: 'New and changed tickets are evaluated against the account automations',
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': ['ticket.created', 'ticket.updated'] },
    queue: 'automations',
  },
  {
    name: 'ticket-events-to-sla',
    description: 'Ticket changes move SLA state (pause on pending, resolution, reopen) and re-pick the policy',
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': ['ticket.created', 'ticket.updated', 'ticket.resolved', 'ticket.deleted'] },
    queue: 'sla',
  },
  {
    name: 'message-created-to-sla',
    description: 'Requests and responses move the reply metrics',
    pattern: { source: [MESSAGE_EVENT_SOURCE], 'detail-type': [MESSAGE_CREATED] },
    queue: 'sla',
  },
  {
    name: 'group-events-to-distribution',
    description: 'Freed capacity backfills waiting tickets; deleted groups are finished in the background',
    pattern: { source: [GROUP_EVENT_SOURCE], 'detail-type': GROUP_EVENT_TYPES },
    queue: 'group-distribution',
  },
  {
    name: 'organization-deleted-to-unlink',
    description: "A deleted organization's contacts not unlinked by the request are unlinked in the background",
    pattern: { source: [ORGANIZATION_EVENT_SOURCE], 'detail-type': [ORGANIZATION_DELETED] },
    queue: 'enrichment',
  },
  {
    name: 'ticket-deleted-to-attachment-cleanup',
    description: "A deleted ticket's messages and attachment objects are deleted in the background",
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': ['ticket.deleted'] },
    queue: 'attachment-cleanup',
  },
  {
    name: 'ticket-events-to-view-counts',
    description: "Ticket creates, changes and deletes move the account's view counts",
    pattern: { source: [TICKET_EVENT_SOURCE], 'detail-type': ['ticket.created', 'ticket.updated', 'ticket.deleted'] },
    queue: 'view-counts',
  },
];

/** Does an entry match a rule's pattern? (exact matches on source and detail-type, as EventBridge evaluates them) */
export function matches(pattern: EventPattern, entry: { source: string; detailType: string }): boolean {
  if (!pattern.source.includes(entry.source)) return false;
  return !pattern['detail-type'] || pattern['detail-type'].includes(entry.detailType);
}

/** The queues an event goes to. */
export const routeEvent = (entry: { source: string; detailType: string }): QueueName[] => RULES.filter((r) => matches(r.pattern, entry)).map((r) => r.queue);
