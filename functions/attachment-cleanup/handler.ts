import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { deleteTicketAttachments } from '#shared/attachments/cleanup.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { sqs } from '#shared/events/sqs.ts';
import { cleanupSettings } from './settings.ts';

const queueUrl = cleanupSettings().ATTACHMENT_CLEANUP_QUEUE_URL;

/**
 * SQS consumer of ticket.deleted: deletes the ticket's messages, their
 * attachment records, then their objects (decisions §14). A ticket with more
 * messages than one message's budget continues with the same event sent
 * back to this queue.
 */
export const handler = eventConsumer('attachment-cleanup', async (detail, envelope) => {
  const ticketId = (detail.data.ticket as { id?: string } | undefined)?.id;
  if (detail.event !== 'ticket.deleted' || !ticketId) return;
  if (await deleteTicketAttachments(detail.accountId, ticketId)) return;
  // In the account's message group, as the bus rule delivered it (a fair queue, app/topology.ts).
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(envelope), MessageGroupId: detail.accountId }));
});
