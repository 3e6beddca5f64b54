import { bindEntity, conditions } from '../db/entity.ts';
import { textSortKey } from '../db/keys.ts';
import { contactEntities } from '../db/entities/contacts.ts';
import { listCounter } from '../db/list-counter.ts';
import { numberedPage, queryAll, queryPage, type Key } from '../db/query.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError } from '../domain/errors.ts';
import { indexWrites, searchIndex, type Searchable } from '../search/word-index.ts';
import { matchesAll, recordWords, searchFilter, searchTerms, searchText } from '../search/words.ts';
import { organizationCountersWrite } from '../organizations/api.ts';
import { historyShard } from '../db/shard.ts';

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

const contacts = bindEntity<ContactRecord>(contactEntities.contact, {
  fields: ['id', 'accountId', 'name', 'email', 'organizationId', 'notes', 'createdAt', 'updatedAt', 'version'],
  keyValues: (c) => ({ changeShard: historyShard(c.id) }),
  extra: (c) => ({ searchText: searchText(wordsOf(c)) }),
});

const wordsOf = (c: ContactRecord) => recordWords({ names: [c.name], addresses: [c.email] });
/** What the word index holds of a contact (decisions §13). */
const searchable = (c: ContactRecord): Searchable => ({
  accountId: c.accountId,
  id: c.id,
  words: wordsOf(c),
  sort: { name: textSortKey(c.name, c.id), email: textSortKey(c.email, c.id) },
});

interface EmailGuard {
  accountId: string;
  email: string;
  contactId: string;
  organizationId: string | null;
}
const emailGuards = bindEntity<EmailGuard>(contactEntities.contactEmail, { fields: ['contactId', 'organizationId'] });

interface RequesterCountItem {
  accountId: string;
  email: string;
  count: number;
}
const requesterCounters = bindEntity<RequesterCountItem>(contactEntities.requesterTickets, { fields: ['email', 'count'], normalize: (r) => ({ ...r, count: Number(r.count ?? 0) }) });

const stale = (message: string) => () => new StaleCountError(message);

/** The email guard also names the contact's organization, so a ticket write finds both with one read. */
const guardPut = (c: ContactRecord, create: boolean): TxWrite =>
  emailGuards.put(
    { accountId: c.accountId, email: c.email, contactId: c.id, organizationId: c.organizationId },
    create ? conditions.absent(() => new AlreadyExistsError(`A contact with email ${c.email} already exists`)) : undefined,
  );

export interface RequesterCount {
  email: string;
  /** Tickets with this requester email now. */
  count: number;
}

/** Tickets per requester email (a missing counter is 0). */
export async function requesterCount(accountId: string, email: string): Promise<RequesterCount> {
  const found = await requesterCounters.get({ accountId, email });
  return { email, count: found?.count ?? 0 };
}

export async function requesterCounts(accountId: string, emails: string[]): Promise<Map<string, number>> {
  const found = await requesterCounters.getMany(emails.map((email) => ({ accountId, email })));
  return new Map(found.map((r) => [r.email, r.count]));
}

/** `count` still holds `n` (a never-written counter holds 0). */
const countIs = (n: number, error: () => Error) => ({
  expr: n === 0 ? 'attribute_not_exists(#c) OR #c = :n' : '#c = :n',
  names: { '#c': 'count' },
  values: { ':n': n },
  error,
});

/** Proves a requester count is still what we read, so an organization's ticketCount moves by the right amount. */
export function requesterCountCheck(accountId: string, rc: RequesterCount): TxWrite {
  return requesterCounters.check({ accountId, email: rc.email }, countIs(rc.count, stale('Tickets for this contact changed meanwhile')));
}

/** Count a ticket in (+1) or out (-1) for its requester email; `expected` guards the value when a contact is created with it. */
export function requesterCountWrite(accountId: string, email: string, delta: number, expected?: number): TxWrite {
  return requesterCounters.updateAttributes(
    { accountId, email },
    { add: { count: delta }, set: { email: email.toLowerCase() } },
    expected !== undefined ? countIs(expected, stale('Tickets for this requester changed meanwhile')) : undefined,
  );
}

/**
 * Proves the email's contact (and the organization it names) is still what a
 * ticket write read, so the ticket is counted for the organization the contact
 * belongs to when the write commits, even while the contact moves.
 */
export function contactGuardCheck(accountId: string, email: string, known: { contactId: string; organizationId: string | null } | null): TxWrite {
  const error = stale("The requester's contact changed meanwhile");
  const check = known
    ? known.organizationId
      ? { expr: 'contactId = :c AND organizationId = :o', values: { ':c': known.contactId, ':o': known.organizationId }, error }
      : { expr: 'contactId = :c AND (attribute_not_exists(organizationId) OR attribute_type(organizationId, :null))', values: { ':c': known.contactId, ':null': 'NULL' }, error }
    : conditions.absent(error);
  return emailGuards.check({ accountId, email }, check);
}

/** The contact (id and organization) behind an email, via its guard item. */
export async function contactByEmail(accountId: string, email: string): Promise<{ contactId: string; organizationId: string | null } | null> {
  const guard = await emailGuards.get({ accountId, email });
  return guard ? { contactId: guard.contactId, organizationId: guard.organizationId ?? null } : null;
}

export async function getContact(accountId: string, id: string): Promise<ContactRecord | null> {
  return contacts.get({ accountId, id });
}

const versionIs = (c: ContactRecord) => conditions.version('version', c.version, stale('The contact was changed concurrently'));

/**
 * Writes that create a contact: the contact, its email guard and, when linked,
 * its organization's counters (one more contact, and that contact's tickets).
 */
export function createContactWrites(c: ContactRecord, tickets: RequesterCount | null): TxWrite[] {
  return [
    contacts.put(c, conditions.absent()),
    guardPut(c, true),
    ...indexWrites('contact', null, searchable(c)),
    listCounter.write(c.accountId, 'CONTACTS', 1),
    ...(c.organizationId && tickets ? [organizationCountersWrite(c.accountId, c.organizationId, { contacts: 1, tickets: tickets.count })] : []),
  ];
}

export async function createContact(c: ContactRecord, tickets: RequesterCount, related: TxWrite[] = []): Promise<void> {
  await transactWrite([...createContactWrites(c, tickets), requesterCountCheck(c.accountId, tickets), ...related]);
}

/**
 * Replace a contact (optimistic locking); a new email moves the guard, a new
 * organization moves the contact and its tickets between the counters.
 * `countedOrg` is the organization that counts the contact now: the stored one
 * if it still exists, else null (its deletion is being finished).
 */
export async function updateContact(current: ContactRecord, next: ContactRecord, before: RequesterCount, after: RequesterCount, countedOrg: string | null): Promise<void> {
  const writes: TxWrite[] = [contacts.put(next, versionIs(current)), ...indexWrites('contact', searchable(current), searchable(next))];
  const emailChanged = next.email.toLowerCase() !== current.email.toLowerCase();
  if (emailChanged) writes.push(emailGuards.delete({ accountId: current.accountId, email: current.email }), guardPut(next, true));
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

/** Delete a contact and its guard (with `related`: its tombstone); its organization (if it still exists) loses it and its tickets from the counts. The tickets stay. */
export async function deleteContact(c: ContactRecord, tickets: RequesterCount, countedOrg: string | null, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    ...related,
    contacts.delete(c, versionIs(c)),
    emailGuards.delete(c),
    ...indexWrites('contact', searchable(c), null),
    listCounter.write(c.accountId, 'CONTACTS', -1),
    ...(countedOrg ? [organizationCountersWrite(c.accountId, countedOrg, { contacts: -1, tickets: -tickets.count }), requesterCountCheck(c.accountId, tickets)] : []),
  ]);
}

export interface ContactFilter {
  search?: string;
  organizationId?: string;
  sortBy: 'name' | 'email' | 'created_at';
  order: 'asc' | 'desc';
}

const SORT_PATTERN = { name: 'byName', email: 'byEmail', created_at: 'byCreated' } as const;

/**
 * A numbered page of contacts with the exact total. A search reads the word
 * index (decisions §13); an organization filter reads that organization's
 * contacts only (gsi3).
 */
export async function listContacts(accountId: string, f: ContactFilter, page: number, limit: number) {
  const terms = f.search ? searchTerms(f.search) : [];
  const forward = f.order === 'asc';
  if (f.organizationId) {
    const all = (await queryAll<Record<string, unknown>>(contacts.query('byOrganization', { accountId, organizationId: f.organizationId })))
      .map(contacts.fromItem)
      .filter((c) => matchesAll(wordsOf(c), terms));
    // Same order as the indexes: text, then id (time order), compared by code unit like DynamoDB.
    const key = (c: ContactRecord) => textSortKey(f.sortBy === 'name' ? c.name : f.sortBy === 'email' ? c.email : '', c.id);
    all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (forward ? 1 : -1));
    return { items: all.slice((page - 1) * limit, page * limit), total: all.length };
  }
  if (terms.length) {
    const hits = await searchIndex(accountId, 'contact', terms, { sortBy: f.sortBy === 'created_at' ? 'created' : f.sortBy, forward });
    if (!hits.truncated) {
      const ids = hits.ids.slice((page - 1) * limit, page * limit);
      const byId = new Map((await contacts.getMany(ids.map((id) => ({ accountId, id })))).map((c) => [c.id, c]));
      return { items: ids.flatMap((id) => byId.get(id) ?? []), total: hits.ids.length };
    }
  }
  // No search, or more matches than the index ranks: walk the sorted list (a search as a bounded filter).
  const q = contacts.query(SORT_PATTERN[f.sortBy], { accountId }, { forward, filter: terms.length ? searchFilter(terms) : undefined });
  // Unfiltered, the total is the account's contact counter (read beside the page), not a walk of the whole list.
  const result = await numberedPage<Record<string, unknown>>(q, page, limit, terms.length ? undefined : listCounter.read(accountId, 'CONTACTS'));
  return { items: result.items.map(contacts.fromItem), total: result.total };
}

/** Up to `limit` contacts still linked to an organization (gsi3), for unlinking them after it is deleted. */
export async function contactsOfOrganization(accountId: string, orgId: string, limit: number): Promise<ContactRecord[]> {
  const page = await queryPage<Record<string, unknown>>({ ...contacts.query('byOrganization', { accountId, organizationId: orgId }), limit });
  return page.items.map(contacts.fromItem);
}

/**
 * Unlink contacts from a deleted organization, 40 per transaction (contact +
 * guard each). Each write holds only if the contact still names that
 * organization at that version; the ones that changed are answered, for the
 * caller to re-read.
 */
export async function unlinkContacts(contacts_: ContactRecord[], now: string): Promise<ContactRecord[]> {
  const staleOnes: ContactRecord[] = [];
  for (let i = 0; i < contacts_.length; i += 40) {
    const batch = contacts_.slice(i, i + 40);
    const writes = batch.flatMap((c) => {
      const next = { ...c, organizationId: null, updatedAt: now, version: c.version + 1 };
      return [contacts.put(next, versionIs(c)), guardPut(next, false)];
    });
    try {
      await transactWrite(writes);
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      staleOnes.push(...batch);
    }
  }
  return staleOnes;
}

/**
 * Index a page of contacts written before the word index existed (admin
 * reindex): their words and their search text, each in one transaction that
 * holds only if the contact is unchanged (a changed one was indexed by its
 * change). Idempotent: word items are keyed by word and id.
 */
export async function reindexContacts(accountId: string, limit: number, startKey?: Key): Promise<{ records: number; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...contacts.query('byCreated', { accountId }), limit, startKey });
  await Promise.all(
    page.items.map(contacts.fromItem).map((c) =>
      transactWrite([contacts.updateAttributes(c, { set: { searchText: searchText(wordsOf(c)) } }, versionIs(c)), ...indexWrites('contact', null, searchable(c))]).catch((err) => {
        if (!(err instanceof StaleCountError)) throw err;
      }),
    ),
  );
  return { records: page.items.length, nextKey: page.nextKey };
}

/** A contact from an item of its indexes (the change index of the incremental export projects whole items). */
export const contactFromItem = (item: Record<string, unknown>): ContactRecord => contacts.fromItem(item);

/** Remove an email's ticket counter once it counts none (an erased contact's, decisions §23): the item's key is the address. A counter still counting stays. */
export async function deleteRequesterCountIfEmpty(accountId: string, email: string): Promise<void> {
  try {
    await writeNow(requesterCounters.delete({ accountId, email }, countIs(0, stale('Tickets for this requester changed meanwhile'))));
  } catch (err) {
    if (!(err instanceof StaleCountError)) throw err;
  }
}
