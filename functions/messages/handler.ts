import { attachmentRoutes } from '#shared/attachments/contract.ts';
import { createUpload, getAttachment } from '#shared/attachments/service.ts';
import { getChannelSettings, updateChannelSettings } from '#shared/email/channel.ts';
import { emailRoutes } from '#shared/email/contract.ts';
import { rawMailOf } from '#shared/email/raw-mail.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { messageRoutes } from '#shared/messages/contract.ts';
import * as messages from '#shared/messages/service.ts';
import { pageMeta } from '#shared/pagination/numbered.ts';
import { redactionRoutes } from '#shared/privacy/redaction-contract.ts';

const { toMessageDto } = messages;
const createdAnswer = async (m: Parameters<typeof toMessageDto>[0]) => ({ success: true, data: await toMessageDto(m) });

export const handler = httpGroup([...messageRoutes, ...attachmentRoutes, ...emailRoutes, ...redactionRoutes], {
  listMessages: async ({ principal, query }) => {
    const page = await messages.listMessages(principal, query);
    return { success: true, data: await Promise.all(page.items.map(toMessageDto)), meta: pageMeta(query.page, query.limit, page.total) };
  },
  getMessage: async ({ principal, params }) => ({ success: true, data: await toMessageDto(await messages.getMessage(principal, params.messageId)) }),
  getRawMail: ({ principal, params }) => rawMailOf(principal, params.messageId),
  // The answer commits with the message when the request holds an Idempotency-Key (decisions: ambiguous writes).
  createMessage: async ({ principal, body }) => createdAnswer(await messages.createMessage(principal, body, { answer: createdAnswer })),
  createUpload: async ({ principal, body }) => ({ success: true, data: await createUpload(principal, body) }),
  getAttachment: async ({ principal, params }) => ({ success: true, data: await getAttachment(principal, params.attachmentId) }),
  // Redaction loads from its own chunk: the messages function's other routes never need it.
  redactMessage: async ({ principal, params, body }) => ({
    success: true,
    data: await toMessageDto(await (await import('#shared/privacy/redaction.ts')).redactMessage(principal, params.messageId, body)),
  }),
  getEmailSettings: async ({ principal }) => ({ success: true, data: await getChannelSettings(principal) }),
  updateEmailSettings: async ({ principal, body }) => ({ success: true, data: await updateChannelSettings(principal, body) }),
});
