import { declareEntity } from '../declaration.ts';

export const accountEntities = {
  account: declareEntity({
    personal: [],
    type: 'account',
    owner: 'accounts',
    description: 'The tenant: name, plan (its rate limit) and, on deployed stacks, its API Gateway usage key (`usageKeyId`, `usageKeyValue`).',
    key: { pk: 'A#{accountId}', sk: 'ACCOUNT' },
  }),
  apiKeyHash: declareEntity({
    personal: [],
    type: 'apiKeyHash',
    owner: 'accounts',
    description:
      "Global lookup of a live API key by the SHA-256 of the key (no tenant data in its key): the authorizer's one GetItem. Carries the key's record (with its `scopes` and expiry, `keyExpiresAt`) and the principal (role, status, plan, usage key), kept in step by every change of them; revoking the key deletes it. `lastUsedAt` is set at most once an hour, with the record's, by the authorizer.",
    key: { pk: 'APIKEY#{hash}', sk: 'APIKEY' },
  }),
  apiKey: declareEntity({
    personal: [],
    type: 'apiKey',
    owner: 'accounts',
    description:
      "An API key's record under its account (never the key itself, only its hash): name, `scopes`, expiry (`keyExpiresAt`; `expiresAt` is the table's TTL), `lastUsedAt` (to the hour), `revokedAt`. Found by id for revocation.",
    key: { pk: 'A#{accountId}', sk: 'APIKEYID#{keyId}' },
    indexes: {
      byAccount: {
        slot: 'table',
        pk: 'A#{accountId}',
        sk: 'APIKEYID#{keyId}',
        pattern: "GET /playbook/api/v1/api-keys (newest first, revoked ones filtered out); admin set-plan: copying the account's plan and usage key onto every key lookup",
      },
    },
  }),
  demoMarker: declareEntity({
    personal: [],
    type: 'demoMarker',
    owner: 'accounts',
    description: 'Local stack only: which account `npm start` provisioned as its demo (`accountId`, `userId`).',
    key: { pk: 'SYSTEM', sk: 'DEMO_ACCOUNT' },
  }),
};
