import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope } from '../pagination/numbered.ts';
import { EmailSettingsSchema, UpdateEmailSettingsBodySchema } from './model.ts';

const PATH = '/helpdesk/api/email/settings';

/** The email channel's settings (decisions §17); served by the messages function, which sends and records mail. */
export const emailRoutes = defineRoutes([
  {
    operationId: 'getEmailSettings',
    method: 'GET',
    path: PATH,
    group: 'messages',
    summary: "The account's email channel: its inbound address, support addresses and sender name",
    access: 'admin',
    success: { status: 200, description: 'The settings', schema: dataEnvelope(EmailSettingsSchema, 'EmailSettingsResponse') },
    errors: [403],
  },
  {
    operationId: 'updateEmailSettings',
    method: 'PUT',
    path: PATH,
    group: 'messages',
    summary: 'Change the support addresses (up to 10) or the sender name',
    description: 'Fields left out stay as they are. A support address may not be on the inbound domain (mail to it would come back to the service).',
    access: 'admin',
    body: UpdateEmailSettingsBodySchema,
    success: { status: 200, description: 'The settings as they now are', schema: dataEnvelope(EmailSettingsSchema, 'EmailSettingsUpdatedResponse') },
    errors: [400, 403, 409, 422],
  },
]);
