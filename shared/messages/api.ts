/**
 * What other modules may use of messages: recording what became of a
 * response's email (the email module); a ticket's messages and moving them to
 * another ticket (a merge, decisions §20). Clearing a deleted ticket's
 * messages and attachments is ./ticket-cleanup.ts. Everything else about a
 * message's items stays behind this module's service.
 */
export { getMessage as getMessageRecord, moveMessageWrites, setEmailDelivery, ticketMessages } from './repository.ts';
export type { MessageRecord } from './repository.ts';
/** Privacy (decisions §23): a message rewritten by a redaction or an erasure, and a ticket's messages walked a page at a time. */
export { rewriteMessageWrites, StaleMessageError, ticketMessagesPage } from './repository.ts';
export type { MessageRewrite } from './repository.ts';
