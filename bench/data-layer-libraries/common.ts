/**
 * What the three variants share, so they differ only in how they declare the
 * contact and build its requests: the record, the key strings (as
 * shared/db/keys.ts builds them), the client (configured as
 * shared/db/client.ts configures the project's one client) and the table.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

export interface ContactRecord {
  id: string;
  accountId: string;
  name: string;
  email: string;
  organizationId: string | null;
  notes: string | null;
  createdAt: string;
  updatedAt: string;
  version: number;
}

/** One page of a list: the records and the position after the last one (undefined on the last page). */
export interface Page {
  items: ContactRecord[];
  cursor?: unknown;
}

/** What each variant implements, from its own declaration of the contact. */
export interface Variant {
  /** Contact Put (absent) + email guard Put (absent) + list counter ADD, as one TransactWriteItems. */
  createContact(c: ContactRecord): Promise<void>;
  getContact(accountId: string, id: string): Promise<ContactRecord | null>;
  /** A page of 25 (or `limit`) contacts by name on gsi1. */
  listByName(accountId: string, limit: number, cursor?: unknown): Promise<Page>;
}

// Key strings exactly as shared/db/keys.ts builds them.
const acct = (accountId: string) => `A#${accountId}`;
export const textSortKey = (text: string, id: string) => `${text.toLowerCase()}\u0001${id}`;
export const keys = {
  contact: (accountId: string, contactId: string) => ({ pk: acct(accountId), sk: `CONTACT#${contactId}` }),
  contactsIndex: (accountId: string) => `${acct(accountId)}#CONTACTS`,
  contactEmail: (accountId: string, email: string) => ({ pk: acct(accountId), sk: `CONTACTEMAIL#${email.toLowerCase()}` }),
  orgContactsIndex: (accountId: string, orgId: string) => `${acct(accountId)}#ORGCONTACTS#${orgId}`,
  requesterTickets: (accountId: string, email: string) => ({ pk: acct(accountId), sk: `REQTICKETS#${email.toLowerCase()}` }),
  listCounter: (accountId: string, list: 'CONTACTS') => ({ pk: acct(accountId), sk: `COUNT#${list}` }),
};

/** The project's client settings (shared/db/client.ts): 3 attempts, per-attempt socket limits, undefined values dropped. */
export function documentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(
    new DynamoDBClient({
      region: 'us-east-1',
      maxAttempts: 3,
      requestHandler: { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true },
      endpoint,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    }),
    { marshallOptions: { removeUndefinedValues: true } },
  );
}

/** The n-th contact of a run: distinct names (so gsi1 has an order to page through) and emails; every third one linked to an organization (gsi3). */
export function contactNo(accountId: string, n: number): ContactRecord {
  const now = new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
  const id = `con_${String(n).padStart(10, '0')}BENCHCONTACT`;
  return {
    id,
    accountId,
    name: `Person ${String((n * 7919) % 100_003).padStart(6, '0')}`,
    email: `person${n}@bench.example`,
    organizationId: n % 3 === 0 ? `org_${n % 30}` : null,
    notes: n % 2 === 0 ? `Met at event ${n}` : null,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
}
