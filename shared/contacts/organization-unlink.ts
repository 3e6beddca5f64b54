import { contactsOfOrganization, unlinkContacts } from './repository.ts';

/**
 * Unlink the contacts of a deleted organization, a page at a time, until none
 * is left or `max` were handled (found through gsi3, never a Scan). Contacts
 * that changed meanwhile are re-read with the next page. Answers whether all
 * are done.
 */
export async function unlinkOrganizationContacts(accountId: string, orgId: string, max = Number.MAX_SAFE_INTEGER): Promise<boolean> {
  for (let handled = 0; handled < max;) {
    const linked = await contactsOfOrganization(accountId, orgId, Math.min(100, max - handled));
    if (!linked.length) return true;
    await unlinkContacts(linked, new Date().toISOString());
    handled += linked.length;
  }
  return false;
}
