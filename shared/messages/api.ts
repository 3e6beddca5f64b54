/**
 * What other modules may use of messages: recording what became of a
 * response's email (the email module). Clearing a deleted ticket's messages
 * and attachments is ./ticket-cleanup.ts. Everything else about a message's
 * items stays behind this module's service.
 */
export { getMessage as getMessageRecord, setEmailDelivery } from './repository.ts';
export type { MessageRecord } from './repository.ts';
