/**
 * What other modules may use of ticket fields: the account's field
 * definitions (ticket validation, SLA and automation checks), options found by
 * value, and the write that counts a ticket's use of an option inside the
 * ticket's own transaction. Everything else about a field's items stays behind
 * this module's service.
 */
export { listAllFields, optionIdsByValue, optionUsageWrite } from './repository.ts';
export type { FieldRecord } from './repository.ts';
