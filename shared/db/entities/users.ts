import { declareEntity } from '../declaration.ts';

export const userEntities = {
  user: declareEntity({
    personal: ['name', 'email', 'searchText'],
    type: 'user',
    owner: 'users',
    description: "A user of the account (role, status, last login). `apiKeyHashes` names the user's live API keys, whose lookups copy its role and status in the same transactions.",
    key: { pk: 'A#{accountId}', sk: 'USER#{id}' },
    version: 'version',
    indexes: {
      byCreated: { slot: 'table', pk: 'A#{accountId}', sk: 'USER#{id}', pattern: 'GET /v1/users sort=created_at (ids are time-ordered)' },
      changes: {
        slot: 'gsi4',
        pk: 'A#{accountId}#CHG#USER#{changeShard}',
        sk: '{changedAt}#{id}',
        pattern: 'GET /v1/exports/users (incremental export), 8 write shards by id merged in updatedAt order',
      },
      byName: { slot: 'gsi1', pk: 'A#{accountId}#USERS', sk: '{name:lower}\u0001{id}', pattern: 'GET /v1/users sort=name' },
      byEmail: { slot: 'gsi2', pk: 'A#{accountId}#USERS', sk: '{email:lower}\u0001{id}', pattern: 'GET /v1/users sort=email' },
    },
  }),
  userEmail: declareEntity({
    personal: ['email'],
    type: 'userEmail',
    owner: 'users',
    description: "Guard making a user's email unique per account (case-insensitive); names the user.",
    key: { pk: 'A#{accountId}', sk: 'USEREMAIL#{email:lower}' },
  }),
  accountOwner: declareEntity({
    personal: [],
    type: 'owner',
    owner: 'users',
    description: "Guard naming the account's single owner (`userId`): written with the account, and an ownership transfer commits only while it still names the former owner.",
    key: { pk: 'A#{accountId}', sk: 'OWNER' },
  }),
};
