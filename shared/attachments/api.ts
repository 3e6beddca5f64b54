/**
 * What other modules may use of attachments' items: an attachment record's key,
 * for the messages module's clearing of a deleted ticket (its messages and the
 * attachment records they name, in the same batches). Everything else about
 * an attachment's items stays behind this module's service.
 */
export { attachmentKey } from './repository.ts';
