/**
 * What other modules may use of contacts: unlinking the contacts of a deleted
 * organization (the organizations module drives it from its event), and
 * indexing contacts written before the word index (admin reindex). Everything
 * else about a contact's items stays behind this module's service.
 */
export { contactsOfOrganization, reindexContacts, unlinkContacts } from './repository.ts';
