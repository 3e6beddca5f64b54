/**
 * What other modules may use of ticket fields: the account's field
 * definitions (ticket validation, SLA and automation checks), options found by
 * value, and the write that counts a ticket's use of an option inside the
 * ticket's own transaction, and loading RE2 before a regex field's value is
 * checked. Everything else about a field's items stays behind
 * this module's service.
 */
export { listAllFields, optionIdsByValue, optionUsageWrite } from './repository.ts';
export { loadPatterns } from './pattern.ts';
export type { FieldRecord } from './repository.ts';
