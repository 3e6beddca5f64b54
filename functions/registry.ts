import type { QueueName } from '#shared/events/topology.ts';
import type { GroupName, RouteContract } from '#shared/http/contract.ts';
import { userRoutes } from '#shared/users/contract.ts';
import { ticketRoutes } from '#shared/tickets/contract.ts';
import { ticketFieldRoutes } from '#shared/ticket-fields/contract.ts';
import { contactRoutes } from '#shared/contacts/contract.ts';
import { organizationRoutes } from '#shared/organizations/contract.ts';
import { messageRoutes } from '#shared/messages/contract.ts';
import { webhookRoutes } from '#shared/webhooks/contract.ts';
import { automationRoutes } from '#shared/automations/contract.ts';
import { slaPolicyRoutes } from '#shared/sla/contract.ts';
import { groupRoutes } from '#shared/groups/contract.ts';

/** Handler shape the local gateway invokes (the same export Lambda calls). */
export type LoadHandler = () => Promise<{ handler: (event: any, context: any) => Promise<any> }>;

export interface ApiGroup {
  name: GroupName;
  /** Entry file, relative to the project root (CDK NodejsFunction entry). */
  entry: string;
  routes: readonly RouteContract[];
  load: LoadHandler;
  /** Queues the group's function sends to directly (URL env vars and send grants come from this). */
  sendsTo?: readonly QueueName[];
}

/**
 * The route table: every endpoint group, its function entry and its routes.
 * The CDK app builds API Gateway resources and one function per group from it;
 * the local gateway routes with it; the OpenAPI document is generated from it.
 */
export const API_GROUPS: readonly ApiGroup[] = [
  { name: 'users', entry: 'functions/users/handler.ts', routes: userRoutes, load: () => import('./users/handler.ts') },
  { name: 'tickets', entry: 'functions/tickets/handler.ts', routes: ticketRoutes, load: () => import('./tickets/handler.ts') },
  { name: 'contacts', entry: 'functions/contacts/handler.ts', routes: contactRoutes, load: () => import('./contacts/handler.ts') },
  { name: 'organizations', entry: 'functions/organizations/handler.ts', routes: organizationRoutes, load: () => import('./organizations/handler.ts') },
  { name: 'messages', entry: 'functions/messages/handler.ts', routes: messageRoutes, load: () => import('./messages/handler.ts') },
  { name: 'ticketFields', entry: 'functions/ticket-fields/handler.ts', routes: ticketFieldRoutes, load: () => import('./ticket-fields/handler.ts') },
  { name: 'automations', entry: 'functions/automations/handler.ts', routes: automationRoutes, load: () => import('./automations/handler.ts') },
  { name: 'groups', entry: 'functions/groups/handler.ts', routes: groupRoutes, load: () => import('./groups/handler.ts') },
  { name: 'webhooks', entry: 'functions/webhooks/handler.ts', routes: webhookRoutes, load: () => import('./webhooks/handler.ts'), sendsTo: ['webhook-delivery'] },
  { name: 'slaPolicies', entry: 'functions/sla-policies/handler.ts', routes: slaPolicyRoutes, load: () => import('./sla-policies/handler.ts'), sendsTo: ['sla-recompute'] },
];

export const AUTHORIZER = { entry: 'functions/authorizer/handler.ts', load: () => import('./authorizer/handler.ts') };
export const NOT_FOUND = { entry: 'functions/not-found/handler.ts', load: () => import('./not-found/handler.ts') };

/** Path prefixes of the two interfaces; unknown paths below them answer 404 in their envelope. */
export const API_PREFIXES = ['/playbook/api/v1', '/helpdesk/api'] as const;

export const allRoutes = (): RouteContract[] => API_GROUPS.flatMap((g) => [...g.routes]);
