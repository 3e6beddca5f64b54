import { BatchGetCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys, textSortKey } from '../db/keys.ts';
import { counterWrite, numberedPage, queryAll, queryPage, readCounter, type PageQuery } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError } from '../domain/errors.ts';
import { organizationCountersWrite } from '../organizations/repository.ts';

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

/** A count moved while we computed with it; the service re-reads and tries again. */
export class StaleCountError extends ConflictError {}

const FIELDS: (keyof ContactRecord)[] = ['id', 'accountId', 'name', 'email', 'organizationId', 'notes', 'createdAt', 'updatedAt', 'version'];
const toRecord = (i: Record<string, unknown>) => Object.fromEntries(FIELDS.map((f) => [f, i[f] ?? null])) as unknown as ContactRecord;

function item(c: ContactRecord) {
  const pk = keys.contactsIndex(c.accountId);
  return {
    ...keys.contact(c.accountId, c.id),
    type: 'contact',
    ...c,
    gsi1pk: pk,
    gsi1sk: textSortKey(c.name, c.id),
    gsi2pk: pk,
    gsi2sk: textSortKey(c.email, c.id),
    // gsi3: the organization's contacts, for its filter and for unlinking them all on delete.
    ...(c.organizationId ? { gsi3pk: keys.orgContactsIndex(c.accountId, c.organizationId), gsi3sk: c.id } : {}),
    searchText: `${c.name.toLowerCase()}\n${c.email.toLowerCase()}`,
  };
}

/** The email guard also names the contact's organization, so a ticket write finds both with one read. */
const guardPut = (c: ContactRecord, create: boolean): TxWrite => ({
  item: {
    Put: {
      TableName: tableName(),
      Item: { ...keys.contactEmail(c.accountId, c.email), type: 'contactEmail', contactId: c.id, organizationId: c.organizationId },
      ...(create ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
    },
  },
  onConditionFailed: () => new AlreadyExistsError(`A contact with email ${c.email} already exists`),
});

export interface RequesterCount {
  email: string;
  /** Tickets with this requester email now. */
  count: number;
}

/** Tickets per requester email (a missing counter is 0). */
export async function requesterCount(accountId: string, email: string): Promise<RequesterCount> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.requesterTickets(accountId, email) }));
  return { email, count: Number(out.Item?.count ?? 0) };
}

export async function requesterCounts(accountId: string, emails: string[]): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  const unique = [...new Set(emails.map((e) => e.toLowerCase()))];
  for (let i = 0; i < unique.length; i += 100) {
    let requestKeys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((e) => keys.requesterTickets(accountId, e));
    while (requestKeys?.length) {
      const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requestKeys } } }));
      for (const it of out.Responses?.[tableName()] ?? []) found.set(it.email as string, Number(it.count ?? 0));
      requestKeys = out.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

/** Proves a requester count is still what we read, so an organization's ticketCount moves by the right amount. */
export function requesterCountCheck(accountId: string, rc: RequesterCount): TxWrite {
  return {
    item: {
      ConditionCheck: {
        TableName: tableName(),
        Key: keys.requesterTickets(accountId, rc.email),
        ConditionExpression: rc.count === 0 ? 'attribute_not_exists(#c) OR #c = :n' : '#c = :n',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':n': rc.count },
      },
    },
    onConditionFailed: () => new StaleCountError('Tickets for this contact changed meanwhile'),
  };
}

/** Count a ticket in (+1) or out (-1) for its requester email; `expected` guards the value when a contact is created with it. */
export function requesterCountWrite(accountId: string, email: string, delta: number, expected?: number): TxWrite {
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.requesterTickets(accountId, email),
        UpdateExpression: 'ADD #c :d SET email = :e',
        ...(expected !== undefined ? { ConditionExpression: expected === 0 ? 'attribute_not_exists(#c) OR #c = :n' : '#c = :n' } : {}),
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':d': delta, ':e': email.toLowerCase(), ...(expected !== undefined ? { ':n': expected } : {}) },
      },
    },
    onConditionFailed: () => new StaleCountError('Tickets for this requester changed meanwhile'),
  };
}

/**
 * Proves the email's contact (and the organization it names) is still what a
 * ticket write read, so the ticket is counted for the organization the contact
 * belongs to when the write commits, even while the contact moves.
 */
export function contactGuardCheck(accountId: string, email: string, known: { contactId: string; organizationId: string | null } | null): TxWrite {
  const check = known
    ? known.organizationId
      ? { expr: 'contactId = :c AND organizationId = :o', values: { ':c': known.contactId, ':o': known.organizationId } }
      : { expr: 'contactId = :c AND (attribute_not_exists(organizationId) OR attribute_type(organizationId, :null))', values: { ':c': known.contactId, ':null': 'NULL' } }
    : { expr: 'attribute_not_exists(pk)', values: undefined };
  return {
    item: {
      ConditionCheck: { TableName: tableName(), Key: keys.contactEmail(accountId, email), ConditionExpression: check.expr, ...(check.values ? { ExpressionAttributeValues: check.values } : {}) },
    },
    onConditionFailed: () => new StaleCountError("The requester's contact changed meanwhile"),
  };
}

/** The contact (id and organization) behind an email, via its guard item. */
export async function contactByEmail(accountId: string, email: string): Promise<{ contactId: string; organizationId: string | null } | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.contactEmail(accountId, email) }));
  return out.Item ? { contactId: out.Item.contactId as string, organizationId: (out.Item.organizationId as string | null) ?? null } : null;
}

export async function getContact(accountId: string, id: string): Promise<ContactRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.contact(accountId, id) }));
  return out.Item ? toRecord(out.Item) : null;
}

/**
 * Writes that create a contact: the contact, its email guard and, when linked,
 * its organization's counters (one more contact, and that contact's tickets).
 */
export function createContactWrites(c: ContactRecord, tickets: RequesterCount | null): TxWrite[] {
  return [
    { item: { Put: { TableName: tableName(), Item: item(c), ConditionExpression: 'attribute_not_exists(pk)' } } },
    guardPut(c, true),
    counterWrite(keys.listCounter(c.accountId, 'CONTACTS'), 1),
    ...(c.organizationId && tickets ? [organizationCountersWrite(c.accountId, c.organizationId, { contacts: 1, tickets: tickets.count })] : []),
  ];
}

export async function createContact(c: ContactRecord, tickets: RequesterCount): Promise<void> {
  await transactWrite([...createContactWrites(c, tickets), requesterCountCheck(c.accountId, tickets)]);
}

/**
 * Replace a contact (optimistic locking); a new email moves the guard, a new
 * organization moves the contact and its tickets between the counters.
 * `countedOrg` is the organization that counts the contact now: the stored one
 * if it still exists, else null (its deletion is being finished).
 */
export async function updateContact(current: ContactRecord, next: ContactRecord, before: RequesterCount, after: RequesterCount, countedOrg: string | null): Promise<void> {
  const writes: TxWrite[] = [
    {
      item: { Put: { TableName: tableName(), Item: item(next), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': current.version } } },
      onConditionFailed: () => new StaleCountError('The contact was changed concurrently'),
    },
  ];
  const emailChanged = next.email.toLowerCase() !== current.email.toLowerCase();
  if (emailChanged) writes.push({ item: { Delete: { TableName: tableName(), Key: keys.contactEmail(current.accountId, current.email) } } }, guardPut(next, true));
  else if (next.organizationId !== current.organizationId || next.email !== current.email) writes.push(guardPut(next, false));
  if (countedOrg === next.organizationId && countedOrg) {
    if (emailChanged) writes.push(organizationCountersWrite(current.accountId, countedOrg, { tickets: after.count - before.count }));
  } else {
    if (countedOrg) writes.push(organizationCountersWrite(current.accountId, countedOrg, { contacts: -1, tickets: -before.count }));
    if (next.organizationId) writes.push(organizationCountersWrite(current.accountId, next.organizationId, { contacts: 1, tickets: after.count }));
  }
  if (countedOrg || next.organizationId) {
    writes.push(requesterCountCheck(current.accountId, before));
    if (emailChanged) writes.push(requesterCountCheck(current.accountId, after));
  }
  await transactWrite(writes);
}

/** Delete a contact and its guard; its organization (if it still exists) loses it and its tickets from the counts. The tickets stay. */
export async function deleteContact(c: ContactRecord, tickets: RequesterCount, countedOrg: string | null): Promise<void> {
  await transactWrite([
    {
      item: { Delete: { TableName: tableName(), Key: keys.contact(c.accountId, c.id), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': c.version } } },
      onConditionFailed: () => new StaleCountError('The contact was changed concurrently'),
    },
    { item: { Delete: { TableName: tableName(), Key: keys.contactEmail(c.accountId, c.email) } } },
    counterWrite(keys.listCounter(c.accountId, 'CONTACTS'), -1),
    ...(countedOrg ? [organizationCountersWrite(c.accountId, countedOrg, { contacts: -1, tickets: -tickets.count }), requesterCountCheck(c.accountId, tickets)] : []),
  ]);
}

export interface ContactFilter {
  search?: string;
  organizationId?: string;
  sortBy: 'name' | 'email' | 'created_at';
  order: 'asc' | 'desc';
}

/** A numbered page of contacts with the exact total; an organization filter reads that organization's contacts only (gsi3). */
export async function listContacts(accountId: string, f: ContactFilter, page: number, limit: number) {
  const filter: { filter?: string; names: Record<string, string>; values: Record<string, unknown> } = f.search
    ? { filter: 'contains(#s, :s)', names: { '#s': 'searchText' }, values: { ':s': f.search.toLowerCase() } }
    : { names: {}, values: {} };
  const forward = f.order === 'asc';
  if (f.organizationId) {
    const all = (
      await queryAll<Record<string, unknown>>({
        index: 'gsi3',
        keyCondition: 'gsi3pk = :pk',
        ...filter,
        values: { ...filter.values, ':pk': keys.orgContactsIndex(accountId, f.organizationId) },
        forward: true,
      })
    ).map(toRecord);
    // Same order as the indexes: text, then id (time order), compared by code unit like DynamoDB.
    const key = (c: ContactRecord) => textSortKey(f.sortBy === 'name' ? c.name : f.sortBy === 'email' ? c.email : '', c.id);
    all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (forward ? 1 : -1));
    return { items: all.slice((page - 1) * limit, page * limit), total: all.length };
  }
  const q: Omit<PageQuery, 'limit' | 'startKey'> =
    f.sortBy === 'created_at'
      ? { keyCondition: 'pk = :pk AND begins_with(sk, :p)', ...filter, values: { ...filter.values, ':pk': keys.accountPk(accountId), ':p': keys.contactPrefix }, forward }
      : {
          index: f.sortBy === 'name' ? 'gsi1' : 'gsi2',
          keyCondition: `${f.sortBy === 'name' ? 'gsi1' : 'gsi2'}pk = :pk`,
          ...filter,
          values: { ...filter.values, ':pk': keys.contactsIndex(accountId) },
          forward,
        };
  // Unfiltered, the total is the account's contact counter (read beside the page), not a walk of the whole list.
  const result = await numberedPage<Record<string, unknown>>(q, page, limit, f.search ? undefined : readCounter(keys.listCounter(accountId, 'CONTACTS')));
  return { items: result.items.map(toRecord), total: result.total };
}

/** Up to `limit` contacts still linked to an organization (gsi3), for unlinking them after it is deleted. */
export async function contactsOfOrganization(accountId: string, orgId: string, limit: number): Promise<ContactRecord[]> {
  const page = await queryPage<Record<string, unknown>>({ index: 'gsi3', keyCondition: 'gsi3pk = :pk', names: {}, values: { ':pk': keys.orgContactsIndex(accountId, orgId) }, forward: true, limit });
  return page.items.map(toRecord);
}

/**
 * Unlink contacts from a deleted organization, 40 per transaction (contact +
 * guard each). Each write holds only if the contact still names that
 * organization at that version; the ones that changed are answered, for the
 * caller to re-read.
 */
export async function unlinkContacts(contacts: ContactRecord[], now: string): Promise<ContactRecord[]> {
  const stale: ContactRecord[] = [];
  for (let i = 0; i < contacts.length; i += 40) {
    const batch = contacts.slice(i, i + 40);
    const writes = batch.flatMap((c) => {
      const next = { ...c, organizationId: null, updatedAt: now, version: c.version + 1 };
      return [{ item: { Put: { TableName: tableName(), Item: item(next), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': c.version } } } }, guardPut(next, false)];
    });
    try {
      await transactWrite(writes);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      stale.push(...batch);
    }
  }
  return stale;
}
