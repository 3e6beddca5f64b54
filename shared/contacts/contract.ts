import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import { dataEnvelope, listEnvelope } from '../pagination/numbered.ts';
import { ContactEmailParamsSchema, ContactParamsSchema, ContactSchema, CreateContactBodySchema, ListContactsQuerySchema, UpdateContactBodySchema } from './model.ts';

const BASE = '/helpdesk/api/contacts';
const ContactResponse = dataEnvelope(ContactSchema, 'ContactResponse');

/** Contacts (api-spec "Contact endpoints"; decisions §3, §11). Reads need viewer, writes agent. */
export const contactRoutes = defineRoutes([
  {
    operationId: 'listContacts',
    method: 'GET',
    path: BASE,
    group: 'contacts',
    summary: 'List contacts',
    description:
      'search matches name or email (case-insensitive); organization_id filters; page/limit with meta.total. Unfiltered, total comes from a counter kept with every create and delete; with search it counts matches among the first 10,000 contacts in the requested order (a lower bound beyond). A page reads the list only as far as its own last item.',
    access: 'viewer',
    query: ListContactsQuerySchema,
    success: { status: 200, description: 'A page of contacts', schema: listEnvelope(ContactSchema, 'ContactList') },
    errors: [400, 403],
  },
  {
    operationId: 'getContactByEmail',
    method: 'GET',
    path: `${BASE}/by-email/{email}`,
    group: 'contacts',
    summary: 'Find a contact by email',
    description: 'Answers `data: null` when no contact has the email.',
    access: 'viewer',
    params: ContactEmailParamsSchema,
    success: { status: 200, description: 'The contact or null', schema: dataEnvelope(z.nullable(ContactSchema), 'ContactOrNullResponse') },
    errors: [403],
  },
  {
    operationId: 'getContact',
    method: 'GET',
    path: `${BASE}/{contactId}`,
    group: 'contacts',
    summary: 'Get a contact',
    access: 'viewer',
    params: ContactParamsSchema,
    success: { status: 200, description: 'The contact', schema: ContactResponse },
    errors: [403, 404],
  },
  {
    operationId: 'createContact',
    method: 'POST',
    path: BASE,
    group: 'contacts',
    summary: 'Create a contact',
    description: 'Email unique per account (409 CONFLICT).',
    access: 'agent',
    body: CreateContactBodySchema,
    success: { status: 201, description: 'The created contact', schema: ContactResponse },
    errors: [400, 403, 409, 422],
  },
  {
    operationId: 'updateContact',
    method: 'PATCH',
    path: `${BASE}/{contactId}`,
    group: 'contacts',
    summary: 'Update a contact',
    access: 'agent',
    params: ContactParamsSchema,
    body: UpdateContactBodySchema,
    success: { status: 200, description: 'The updated contact', schema: ContactResponse },
    errors: [400, 403, 404, 409, 422],
  },
  {
    operationId: 'deleteContact',
    method: 'DELETE',
    path: `${BASE}/{contactId}`,
    group: 'contacts',
    summary: 'Delete a contact',
    description: "The contact's tickets are kept.",
    access: 'agent',
    params: ContactParamsSchema,
    success: { status: 204, description: 'Deleted' },
    errors: [403, 404],
  },
]);
