/**
 * What other modules may use of contacts: indexing contacts written before
 * the word index (admin reindex). Unlinking the contacts of a deleted
 * organization is ./organization-unlink.ts (its delete request and its
 * organization.deleted consumer call it). Everything else about a contact's
 * items stays behind this module's service.
 */
export { reindexContacts } from './repository.ts';
