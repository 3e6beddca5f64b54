import { httpGroup } from '#shared/http/middleware.ts';
import { messageRoutes } from '#shared/messages/contract.ts';
import * as messages from '#shared/messages/service.ts';
import { pageMeta } from '#shared/pagination/numbered.ts';

const { toMessageDto } = messages;

export const handler = httpGroup(messageRoutes, {
  listMessages: async ({ principal, query }) => {
    const page = await messages.listMessages(principal, query);
    return { success: true, data: page.items.map(toMessageDto), meta: pageMeta(query.page, query.limit, page.total) };
  },
  getMessage: async ({ principal, params }) => ({ success: true, data: toMessageDto(await messages.getMessage(principal, params.messageId)) }),
  createMessage: async ({ principal, body }) => ({ success: true, data: toMessageDto(await messages.createMessage(principal, body)) }),
});
