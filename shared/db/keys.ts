/**
 * Every key string of the table is built here. Account-scoped items live under
 * `A#<accountId>`, so a request can only ever address its own tenant's items.
 * The two global lookups (API key hash, demo marker) carry no tenant data.
 */
const acct = (accountId: string) => `A#${accountId}`;

export const keys = {
  account: (accountId: string) => ({ pk: acct(accountId), sk: 'ACCOUNT' }),

  user: (accountId: string, userId: string) => ({ pk: acct(accountId), sk: `USER#${userId}` }),
  userPrefix: 'USER#',
  /** Guard item that makes an email unique per account, case-insensitively. */
  userEmail: (accountId: string, email: string) => ({ pk: acct(accountId), sk: `USEREMAIL#${email.toLowerCase()}` }),
  /** Guard item naming the account's single owner. */
  owner: (accountId: string) => ({ pk: acct(accountId), sk: 'OWNER' }),
  /** GSI partitions for user lists sorted by name (gsi1) and email (gsi2). */
  usersByName: (accountId: string) => `${acct(accountId)}#USERS`,
  accountPk: acct,

  /** Global lookup by SHA-256 of the key: the only way to resolve a presented API key. */
  apiKeyHash: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  /** The key's record under its account, found by id for revocation. */
  apiKey: (accountId: string, keyId: string) => ({ pk: acct(accountId), sk: `APIKEYID#${keyId}` }),

  rateWindow: (accountId: string, windowStart: number) => ({ pk: acct(accountId), sk: `RL#${windowStart}` }),

  /** Local-stack marker: which account `npm start` provisioned as its demo. */
  demoMarker: () => ({ pk: 'SYSTEM', sk: 'DEMO_ACCOUNT' }),
};
