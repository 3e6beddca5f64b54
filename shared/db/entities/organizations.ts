import { declareEntity } from '../declaration.ts';

export const organizationEntities = {
  organization: declareEntity({
    type: 'organization',
    owner: 'organizations',
    description: 'An organization (customer company); contactCount and ticketCount move in the transactions of the changes they count.',
    key: { pk: 'A#{accountId}', sk: 'ORG#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'ORG#{id}', pattern: 'GET /organizations sort_by=created_at; sort_by=contact_count (sorted in memory)' },
      byName: { slot: 'gsi1', pk: 'A#{accountId}#ORGS', sk: '{sortName:lower}\u0001{id}', pattern: 'GET /organizations sort_by=name' },
      byDomain: { slot: 'gsi2', pk: 'A#{accountId}#ORGS', sk: '{organizationalDomain:lower}\u0001{id}', pattern: 'GET /organizations sort_by=organizational_domain' },
    },
  }),
  organizationDomain: declareEntity({
    type: 'orgDomain',
    owner: 'organizations',
    description: "Guard making an organization's domain unique per account; names the organization (contacts are linked by their email's domain).",
    key: { pk: 'A#{accountId}', sk: 'ORGDOMAIN#{domain:lower}' },
  }),
};
