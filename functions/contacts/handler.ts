import { contactRoutes } from '#shared/contacts/contract.ts';
import * as contacts from '#shared/contacts/service.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { pageMeta } from '#shared/pagination/numbered.ts';

const one = async (accountId: string, c: Parameters<typeof contacts.toContactDto>[1]) => ({ success: true, data: await contacts.toContactDto(accountId, c) });

export const handler = httpGroup(contactRoutes, {
  listContacts: async ({ principal, query }) => {
    const page = await contacts.listContacts(principal, query);
    return { success: true, data: await contacts.toContactDtos(principal.accountId, page.items), meta: pageMeta(query.page, query.limit, page.total) };
  },
  getContactByEmail: async ({ principal, params }) => {
    const c = await contacts.getContactByEmail(principal, params.email);
    return { success: true, data: c ? await contacts.toContactDto(principal.accountId, c) : null };
  },
  getContact: async ({ principal, params }) => one(principal.accountId, await contacts.getContact(principal, params.contactId)),
  createContact: async ({ principal, body }) => contacts.createContact(principal, body, (made) => one(principal.accountId, made)),
  updateContact: async ({ principal, params, body }) => one(principal.accountId, await contacts.updateContact(principal, params.contactId, body)),
  deleteContact: async ({ principal, params }) => contacts.deleteContact(principal, params.contactId),
});
