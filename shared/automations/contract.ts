import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope } from '../pagination/numbered.ts';
import { AutomationIdParamsSchema, AutomationSchema, CreateAutomationBodySchema, DryRunBodySchema, DryRunResultSchema, ReorderAutomationsBodySchema, UpdateAutomationBodySchema } from './model.ts';

const BASE = '/helpdesk/api/automations';
const one = dataEnvelope(AutomationSchema, 'AutomationResponse');
const list = dataEnvelope(z.array(AutomationSchema), 'AutomationList');

const EVALUATION =
  'On every ticket.created and ticket.updated (not caused by an automation), and hourly over open tickets for rules with a hoursSince* condition, the first active automation by position whose rule holds applies its actions as the system caller (it may set closed). Actions that would change nothing write nothing.';

/** Automations (api-spec "Automation endpoints"; decisions §8). Viewer reads, admin writes. */
export const automationRoutes = defineRoutes([
  {
    operationId: 'listAutomations',
    method: 'GET',
    path: BASE,
    group: 'automations',
    summary: 'List automations',
    description: `Every automation of the account, ordered by position. ${EVALUATION}`,
    access: 'viewer',
    success: { status: 200, description: 'The automations in evaluation order', schema: list },
    errors: [403],
  },
  {
    operationId: 'createAutomation',
    method: 'POST',
    path: BASE,
    group: 'automations',
    summary: 'Create an automation',
    description: 'Placed last in the order. The rule is checked field by field: 422 VALIDATION_ERROR with details naming the path (e.g. rule.all.2.op). At most 100 automations per account.',
    access: 'admin',
    body: CreateAutomationBodySchema,
    success: { status: 201, description: 'The created automation', schema: one },
    errors: [400, 403, 422],
  },
  {
    operationId: 'reorderAutomations',
    method: 'PUT',
    path: `${BASE}/reorder`,
    group: 'automations',
    summary: 'Reorder automations',
    description: 'orderedIds must list every automation id of the account exactly once (422 otherwise, and nothing changes). Automations evaluate top to bottom; the first match applies.',
    access: 'admin',
    body: ReorderAutomationsBodySchema,
    success: { status: 200, description: 'The automations in their new order', schema: list },
    errors: [400, 403, 409, 422],
  },
  {
    operationId: 'testAutomations',
    method: 'POST',
    path: `${BASE}/test`,
    group: 'automations',
    summary: 'Dry run: explain what the automations would do to a ticket',
    description:
      "Give a stored ticket ({ticketId}) or one described inline ({ticket}), and optionally the clock ({now}) for time conditions. Answers, without writing anything, which automation would apply, every automation with each condition, the ticket's actual value and whether it held, and the changes the actions would make.",
    access: 'viewer',
    body: DryRunBodySchema,
    success: { status: 200, description: 'The explanation', schema: dataEnvelope(DryRunResultSchema, 'AutomationDryRunResponse') },
    errors: [400, 403, 404, 422],
  },
  {
    operationId: 'updateAutomation',
    method: 'PUT',
    path: `${BASE}/{automationId}`,
    group: 'automations',
    summary: 'Update an automation',
    description: 'The create shape; only the given fields change (a given rule replaces the old one whole).',
    access: 'admin',
    params: AutomationIdParamsSchema,
    body: UpdateAutomationBodySchema,
    success: { status: 200, description: 'The updated automation', schema: one },
    errors: [400, 403, 404, 409, 422],
  },
  {
    operationId: 'deleteAutomation',
    method: 'DELETE',
    path: `${BASE}/{automationId}`,
    group: 'automations',
    summary: 'Delete an automation',
    description: 'The automations after it move up one position.',
    access: 'admin',
    params: AutomationIdParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404],
  },
]);
