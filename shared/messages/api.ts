/**
 * What other modules may use of messages: clearing a deleted ticket's
 * messages (the attachments module drives it from ticket.deleted, with the
 * attachment records each message names), and recording what became of a
 * response's email (the email module). Everything else about a message's
 * items stays behind this module's service.
 */
export { deleteMessageCounter, deleteTicketMessages, getMessage as getMessageRecord, setEmailDelivery, ticketMessages } from './repository.ts';
export type { MessageRecord } from './repository.ts';
