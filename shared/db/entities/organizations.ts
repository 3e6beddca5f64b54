import { declareEntity } from '../declaration.ts';

export const organizationEntities = {
  organization: declareEntity({
    personal: [],
    type: 'organization',
    owner: 'organizations',
    description: 'An organization (customer company); contactCount and ticketCount move in the transactions of the changes they count.',
    key: { pk: 'A#{accountId}', sk: 'ORG#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'ORG#{id}', pattern: 'GET /organizations sort_by=created_at; sort_by=contact_count (sorted in memory)' },
      changes: {
        slot: 'gsi4',
        pk: 'A#{accountId}#CHG#ORGANIZATION#{changeShard}',
        sk: '{updatedAt}#{id}',
        pattern: 'GET /v1/exports/organizations (incremental export), 8 write shards by id merged in updatedAt order',
      },
      byName: { slot: 'gsi1', pk: 'A#{accountId}#ORGS', sk: '{sortName:lower}\u0001{id}', pattern: 'GET /organizations sort_by=name' },
      byDomain: { slot: 'gsi2', pk: 'A#{accountId}#ORGS', sk: '{organizationalDomain:lower}\u0001{id}', pattern: 'GET /organizations sort_by=organizational_domain' },
    },
  }),
  organizationDomain: declareEntity({
    personal: [],
    type: 'orgDomain',
    owner: 'organizations',
    description: "Guard making an organization's domain unique per account; names the organization (contacts are linked by their email's domain).",
    key: { pk: 'A#{accountId}', sk: 'ORGDOMAIN#{domain:lower}' },
  }),
};
