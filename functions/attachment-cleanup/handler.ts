import { deleteTicketAttachments } from '#shared/messages/ticket-cleanup.ts';
import { eventConsumer } from '#shared/events/consumer.ts';
import { sendMessage } from '#shared/events/sqs.ts';
import { ticketRefDetailSchema } from '#shared/tickets/events.ts';
import { cleanupSettings } from './settings.ts';

const queueUrl = cleanupSettings().ATTACHMENT_CLEANUP_QUEUE_URL;

/**
 * SQS consumer of ticket.deleted (rule ticket-deleted-to-attachment-cleanup):
 * deletes the ticket's messages, their attachment records, then their objects
 * (decisions §14). A ticket with more messages than one message's budget
 * continues with the same event sent back to this queue.
 */
export const handler = eventConsumer('attachment-cleanup', ticketRefDetailSchema(['ticket.deleted']), async (detail, envelope) => {
  if (await deleteTicketAttachments(detail.accountId, detail.data.ticket.id)) return;
  // In the account's message group, as the bus rule delivered it (a fair queue, app/topology.ts).
  await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify(envelope), MessageGroupId: detail.accountId });
});
