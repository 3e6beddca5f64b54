import { defineRoutes } from '../http/contract.ts';
import { MessageSchema } from '../messages/resource.ts';
import { MessageParamsSchema } from '../messages/model.ts';
import { dataEnvelope } from '../pagination/numbered.ts';
import { RedactBodySchema } from './model.ts';

/** Privacy (decisions §23): redaction, served by the messages function. */
export const redactionRoutes = defineRoutes([
  {
    operationId: 'redactMessage',
    method: 'POST',
    path: '/helpdesk/api/messages/{messageId}/redact',
    group: 'messages',
    summary: 'Redact text or files of a message',
    description:
      'Every occurrence of text in content and textContent becomes ▇ repeated to its length; the named attachments are deleted and stay listed with redacted: true and no url (an old download URL stops working). ' +
      'The ticket gets an audit (via "redaction") that records that a redaction happened, never the text; no event is sent. Repeating a redaction changes nothing more and answers the message.',
    auth: 'session',
    access: 'admin',
    params: MessageParamsSchema,
    body: RedactBodySchema,
    success: { status: 200, description: 'The message as redacted', schema: dataEnvelope(MessageSchema, 'RedactedMessageResponse') },
    errors: [400, 403, 404, 409, 422],
  },
]);
