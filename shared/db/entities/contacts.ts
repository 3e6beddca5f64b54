import { declareEntity } from '../declaration.ts';

export const contactEntities = {
  contact: declareEntity({
    personal: ['name', 'email', 'notes', 'searchText'],
    type: 'contact',
    owner: 'contacts',
    description: 'A contact (customer) of the account.',
    key: { pk: 'A#{accountId}', sk: 'CONTACT#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'CONTACT#{id}', pattern: 'GET /contacts sort_by=created_at (ids are time-ordered)' },
      changes: {
        slot: 'gsi4',
        pk: 'A#{accountId}#CHG#CONTACT#{changeShard}',
        sk: '{updatedAt}#{id}',
        pattern: 'GET /v1/exports/contacts (incremental export), 8 write shards by id merged in updatedAt order',
      },
      byName: { slot: 'gsi1', pk: 'A#{accountId}#CONTACTS', sk: '{name:lower}\u0001{id}', pattern: 'GET /contacts sort_by=name' },
      byEmail: { slot: 'gsi2', pk: 'A#{accountId}#CONTACTS', sk: '{email:lower}\u0001{id}', pattern: 'GET /contacts sort_by=email' },
      byOrganization: {
        slot: 'gsi3',
        pk: 'A#{accountId}#ORGCONTACTS#{organizationId}',
        sk: '{id}',
        pattern: 'GET /contacts?organization_id=…; unlinking the contacts of a deleted organization (sparse: linked contacts only)',
      },
    },
  }),
  contactEmail: declareEntity({
    personal: ['email'],
    type: 'contactEmail',
    owner: 'contacts',
    description: "Guard making a contact's email unique per account (case-insensitive); names the contact and its organization, so a ticket write finds both with one read.",
    key: { pk: 'A#{accountId}', sk: 'CONTACTEMAIL#{email:lower}' },
  }),
  requesterTickets: declareEntity({
    personal: ['email'],
    type: 'requesterTickets',
    owner: 'contacts',
    description: "Tickets per requester email (`count`), kept with every ticket write: a contact's ticketCount, even for a contact created later.",
    key: { pk: 'A#{accountId}', sk: 'REQTICKETS#{email:lower}' },
  }),
};
