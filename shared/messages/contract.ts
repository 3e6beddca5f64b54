import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope, listEnvelope } from '../pagination/numbered.ts';
import { CreateMessageBodySchema, ListMessagesQuerySchema, MessageParamsSchema, MessageSchema } from './model.ts';

const BASE = '/helpdesk/api/messages';

/** Messages (api-spec "Message endpoints"; decisions §12). Session token only. */
export const messageRoutes = defineRoutes([
  {
    operationId: 'listMessages',
    method: 'GET',
    path: BASE,
    group: 'messages',
    summary: "List a ticket's messages",
    description: "page/limit with meta.total: the ticket's message count, kept with every message written. A page reads the ticket's messages only as far as its own last item.",
    auth: 'session',
    access: 'viewer',
    query: ListMessagesQuerySchema,
    success: { status: 200, description: 'A page of messages', schema: listEnvelope(MessageSchema, 'MessageList') },
    errors: [400, 403, 404],
  },
  {
    operationId: 'getMessage',
    method: 'GET',
    path: `${BASE}/{messageId}`,
    group: 'messages',
    summary: 'Get a message',
    auth: 'session',
    access: 'viewer',
    params: MessageParamsSchema,
    success: { status: 200, description: 'The message', schema: dataEnvelope(MessageSchema, 'MessageResponse') },
    errors: [403, 404],
  },
  {
    operationId: 'getRawMail',
    method: 'GET',
    path: `${BASE}/{messageId}/raw`,
    group: 'messages',
    summary: 'Get the mail a message was made from, as received',
    description:
      'message/rfc822: the raw mail the email channel received (every header, the quoted history and signature a reply’s message leaves out), kept 30 days after it arrived. A mail over 4 MiB answers 302 to a download link (15 minutes). A message not made from mail, or whose mail is no longer kept, is 404.',
    auth: 'session',
    access: 'agent',
    params: MessageParamsSchema,
    success: { status: 200, description: 'The raw mail (message/rfc822)' },
    errors: [403, 404],
  },
  {
    operationId: 'createMessage',
    method: 'POST',
    path: BASE,
    group: 'messages',
    summary: 'Add a message to a ticket',
    description:
      'content is sanitized HTML; text_content is derived when not given. ticket_update applies atomically with the message (same rules and events as PUT /v1/tickets/:id). ' +
      'A closed ticket refuses messages (403 TICKET_CLOSED); status closed is for automations only (403 CLOSED_STATUS_SYSTEM_ONLY). A response with send_email (default true) emails the requester and ccs.',
    auth: 'session',
    access: 'agent',
    body: CreateMessageBodySchema,
    success: { status: 201, description: 'The created message', schema: dataEnvelope(MessageSchema, 'MessageCreatedResponse') },
    errors: [400, 403, 404, 409, 422],
  },
]);
