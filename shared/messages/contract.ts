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
