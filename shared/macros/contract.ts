import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import { MessageSchema } from '../messages/resource.ts';
import { TicketSchema } from '../tickets/resource.ts';
import { ApplyMacroParamsSchema, CreateMacroBodySchema, MacroIdParamsSchema, MacroPreviewSchema, MacroSchema, UpdateMacroBodySchema } from './model.ts';

const BASE = '/helpdesk/api/v1/macros';
const APPLY = '/helpdesk/api/v1/tickets/{id}/macros/{macroId}/apply';
const MacroEnvelope = z.meta(z.object({ macro: MacroSchema }), { id: 'MacroResponse' });

/** Macros (decisions §22): shared ones written by admins, personal ones by their creator; applied by agents. */
export const macroRoutes = defineRoutes([
  {
    operationId: 'listMacros',
    method: 'GET',
    path: BASE,
    group: 'views',
    summary: 'List macros',
    description: "The account's shared macros and the caller's personal macros.",
    access: 'viewer',
    success: { status: 200, description: 'The visible macros', schema: z.meta(z.object({ macros: z.array(MacroSchema) }), { id: 'MacroList' }) },
    errors: [403],
  },
  {
    operationId: 'createMacro',
    method: 'POST',
    path: BASE,
    group: 'views',
    summary: 'Create a macro',
    description:
      'Actions are checked as a ticket update checks them (422 naming actions.N.value). A shared macro needs an admin; a personal one belongs to its creator. At most 100 shared macros per account and 20 personal per user (422).',
    access: 'agent',
    body: CreateMacroBodySchema,
    wrapper: 'macro',
    success: { status: 201, description: 'The created macro', schema: MacroEnvelope },
    errors: [400, 403, 409, 422],
  },
  {
    operationId: 'getMacro',
    method: 'GET',
    path: `${BASE}/{id}`,
    group: 'views',
    summary: 'Get a macro',
    access: 'viewer',
    params: MacroIdParamsSchema,
    success: { status: 200, description: 'The macro', schema: MacroEnvelope },
    errors: [403, 404],
  },
  {
    operationId: 'updateMacro',
    method: 'PUT',
    path: `${BASE}/{id}`,
    group: 'views',
    summary: 'Update a macro',
    access: 'agent',
    params: MacroIdParamsSchema,
    body: UpdateMacroBodySchema,
    wrapper: 'macro',
    success: { status: 200, description: 'The updated macro', schema: MacroEnvelope },
    errors: [400, 403, 404, 409, 422],
  },
  {
    operationId: 'deleteMacro',
    method: 'DELETE',
    path: `${BASE}/{id}`,
    group: 'views',
    summary: 'Delete a macro',
    access: 'agent',
    params: MacroIdParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404, 409],
  },
  {
    operationId: 'previewMacro',
    method: 'GET',
    path: APPLY,
    group: 'views',
    summary: 'Preview a macro on a ticket',
    description: 'The ticket as the macro would leave it and its comment rendered; nothing is saved. The rules of a ticket update apply (a closed ticket: 403 TICKET_CLOSED).',
    access: 'agent',
    params: ApplyMacroParamsSchema,
    success: { status: 200, description: 'What applying would do', schema: MacroPreviewSchema },
    errors: [403, 404, 422],
  },
  {
    operationId: 'applyMacro',
    method: 'POST',
    path: APPLY,
    group: 'views',
    summary: 'Apply a macro to a ticket',
    description:
      'The ticket change and the comment as one message with its ticket update, in one transaction, audited via macro with the macro as actor; a response comment is emailed as any response. message is null without a comment.',
    access: 'agent',
    params: ApplyMacroParamsSchema,
    success: { status: 200, description: 'The ticket and the message', schema: z.meta(z.object({ ticket: TicketSchema, message: z.nullable(MessageSchema) }), { id: 'MacroApplied' }) },
    errors: [403, 404, 409, 422],
  },
]);
