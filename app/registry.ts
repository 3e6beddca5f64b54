import type { QueueName, StackPart } from './topology.ts';
import type { GroupName, RouteContract } from '#shared/http/contract.ts';
import { userRoutes } from '#shared/users/contract.ts';
import { apiKeyRoutes } from '#shared/accounts/contract.ts';
import { ticketRoutes } from '#shared/tickets/contract.ts';
import { ticketFieldRoutes } from '#shared/ticket-fields/contract.ts';
import { contactRoutes } from '#shared/contacts/contract.ts';
import { organizationRoutes } from '#shared/organizations/contract.ts';
import { messageRoutes } from '#shared/messages/contract.ts';
import { emailRoutes } from '#shared/email/contract.ts';
import { attachmentRoutes } from '#shared/attachments/contract.ts';
import { webhookRoutes } from '#shared/webhooks/contract.ts';
import { automationRoutes } from '#shared/automations/contract.ts';
import { slaPolicyRoutes } from '#shared/sla/contract.ts';
import { groupRoutes } from '#shared/groups/contract.ts';
import { historyRoutes } from '#shared/history/contract.ts';
import { bulkRoutes } from '#shared/bulk/contract.ts';
import { jobRoutes } from '#shared/jobs/contract.ts';
import { mergeRoutes } from '#shared/merge/contract.ts';
import { satisfactionRoutes } from '#shared/satisfaction/contract.ts';
import { personalDataRoutes, retentionRoutes } from '#shared/privacy/contract.ts';
import { redactionRoutes } from '#shared/privacy/redaction-contract.ts';
import { viewRoutes } from '#shared/views/contract.ts';
import { macroRoutes } from '#shared/macros/contract.ts';

export interface ApiGroup {
  name: GroupName;
  /** Entry file, relative to the project root (CDK NodejsFunction entry). */
  entry: string;
  routes: readonly RouteContract[];
  /** Queues the group's function sends to directly (URL env vars and send grants come from this). */
  sendsTo?: readonly QueueName[];
  /** The feature whose nested stack builds the group's function (app/topology.ts StackPart); default the service's stack. */
  part?: StackPart;
}

/**
 * The route table: every endpoint group, its function entry and its routes.
 * The OpenAPI document is generated from it, and API Gateway is that document
 * (infra/api-definition.ts); the CDK app builds one function per group from it;
 * the local gateway routes by the template built from it.
 */
export const API_GROUPS: readonly ApiGroup[] = [
  // API keys are user-management resources (decisions §18): the users function serves them.
  { name: 'users', entry: 'functions/users/handler.ts', routes: [...userRoutes, ...apiKeyRoutes] },
  { name: 'tickets', entry: 'functions/tickets/handler.ts', routes: ticketRoutes },
  { name: 'contacts', entry: 'functions/contacts/handler.ts', routes: contactRoutes },
  { name: 'organizations', entry: 'functions/organizations/handler.ts', routes: organizationRoutes },
  { name: 'messages', entry: 'functions/messages/handler.ts', routes: [...messageRoutes, ...attachmentRoutes, ...emailRoutes, ...redactionRoutes] },
  { name: 'ticketFields', entry: 'functions/ticket-fields/handler.ts', routes: ticketFieldRoutes },
  { name: 'automations', entry: 'functions/automations/handler.ts', routes: automationRoutes },
  { name: 'groups', entry: 'functions/groups/handler.ts', routes: groupRoutes },
  { name: 'webhooks', entry: 'functions/webhooks/handler.ts', routes: webhookRoutes, sendsTo: ['webhook-delivery'] },
  { name: 'slaPolicies', entry: 'functions/sla-policies/handler.ts', routes: slaPolicyRoutes, sendsTo: ['sla-recompute'] },
  { name: 'history', entry: 'functions/history/handler.ts', routes: historyRoutes },
  // Requests that make jobs (bulk actions, merges) and the jobs they make: their own function, the only API function that sends to the bulk-jobs queue.
  { name: 'jobs', entry: 'functions/jobs/handler.ts', routes: [...bulkRoutes, ...mergeRoutes, ...jobRoutes, ...personalDataRoutes, ...retentionRoutes], sendsTo: ['bulk-jobs'] },
  // Satisfaction (decisions §24): its own small function, so the public survey page loads no other group's code.
  { name: 'satisfaction', entry: 'functions/satisfaction/handler.ts', routes: satisfactionRoutes },
  // Views and macros: their own function, so the tickets function's cold start does not grow with them.
  { name: 'views', entry: 'functions/views/handler.ts', routes: [...viewRoutes, ...macroRoutes], sendsTo: ['view-recount'], part: 'views' },
];

export const AUTHORIZER = { entry: 'functions/authorizer/handler.ts' };
export const NOT_FOUND = { entry: 'functions/not-found/handler.ts' };

/** Path prefixes of the two interfaces; unknown paths below them answer 404 in their envelope. */
export const API_PREFIXES = ['/playbook/api/v1', '/helpdesk/api'] as const;

export const allRoutes = (): RouteContract[] => API_GROUPS.flatMap((g) => [...g.routes]);
