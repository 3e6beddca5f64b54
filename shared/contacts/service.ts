import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError, ValidationError } from '../domain/errors.ts';
import { answerWrites } from '../idempotency/service.ts';
import { tombstoneWrite } from '../exports/api.ts';
import { newId } from '../ids.ts';
import { findOrganization, findOrganizations, organizationCountersWrite, organizationExists, organizationIdByDomain, StaleOrganizationError } from '../organizations/api.ts';
import { CONTACT_EMAIL_MAX, emailDomain, FREE_MAIL_DOMAINS } from './limits.ts';
import type { Contact, CreateContactInput, ListContactsQuery, UpdateContactInput } from './model.ts';
import * as repo from './repository.ts';
import type { ContactRecord } from './repository.ts';

/** Render contacts: organizationName follows the linked organization, ticketCount the requester counter. */
export async function toContactDtos(accountId: string, contacts: ContactRecord[]): Promise<Contact[]> {
  const [orgs, counts] = await Promise.all([
    findOrganizations(
      accountId,
      contacts.map((c) => c.organizationId).filter((id): id is string => Boolean(id)),
    ),
    repo.requesterCounts(
      accountId,
      contacts.map((c) => c.email),
    ),
  ]);
  return contacts.map((c) => {
    // A contact can briefly point at an organization being deleted; it reads as unlinked.
    const org = c.organizationId ? orgs.get(c.organizationId) : undefined;
    return {
      id: c.id,
      name: c.name,
      email: c.email,
      organizationId: org ? c.organizationId : null,
      organizationName: org?.name ?? null,
      notes: c.notes,
      ticketCount: counts.get(c.email.toLowerCase()) ?? 0,
      createdAt: c.createdAt,
    };
  });
}

/** Contacts of the change index, as the incremental export answers them (GET's shape, counts and organization included). */
export async function exportContacts(accountId: string, items: Record<string, unknown>[]) {
  const records = items.map(repo.contactFromItem);
  const dtos = await toContactDtos(accountId, records);
  return records.map((c, i) => ({ id: c.id, updatedAt: c.updatedAt, object: dtos[i] }));
}

export const toContactDto = async (accountId: string, c: ContactRecord) => (await toContactDtos(accountId, [c]))[0];

/** The organization a new contact joins: the one given (must exist), else the one owning its email domain (not free-mail). */
async function organizationFor(accountId: string, email: string, given: string | null | undefined): Promise<string | null> {
  if (given) {
    if (!(await findOrganization(accountId, given))) throw new ValidationError('No such organization', [{ field: 'organizationId', message: 'no such organization in this account' }]);
    return given;
  }
  if (given === null) return null;
  const domain = emailDomain(email);
  return FREE_MAIL_DOMAINS.has(domain) ? null : organizationIdByDomain(accountId, domain);
}

/** Retry an operation whose counts moved, or whose organization went away, underneath it. */
const retrying = <T>(op: () => Promise<T>) => retryOnConflict(op, (err) => err instanceof repo.StaleCountError || err instanceof StaleOrganizationError);

/**
 * The organization that counts a contact: the one it names, unless that one is
 * deleted (its contacts are being unlinked in the background); then none, so
 * the contact's writes never fail on a missing organization.
 */
const countedOrganization = async (accountId: string, orgId: string | null) => (orgId && (await organizationExists(accountId, orgId)) ? orgId : null);

async function requireContact(accountId: string, id: string) {
  const c = await repo.getContact(accountId, id);
  if (!c) throw new NotFoundError('Contact');
  return c;
}

export const getContact = (p: Principal, id: string) => requireContact(p.accountId, id);

export async function getContactByEmail(p: Principal, email: string): Promise<ContactRecord | null> {
  // Longer than any contact's email: no contact has it, and it would not fit in a key.
  if (email.length > CONTACT_EMAIL_MAX) return null;
  const found = await repo.contactByEmail(p.accountId, email);
  return found ? repo.getContact(p.accountId, found.contactId) : null;
}

function newContact(accountId: string, input: { name: string; email: string; notes?: string | null }, organizationId: string | null): ContactRecord {
  const now = new Date().toISOString();
  return { id: newId('con'), accountId, name: input.name, email: input.email, organizationId, notes: input.notes ?? null, createdAt: now, updatedAt: now, version: 1 };
}

/**
 * Create a contact and answer `answer(contact)`: the request's answer, made before the commit (it reads the
 * organization's name and the ticket count), so that it commits with the contact when the request holds an
 * Idempotency-Key. A commit whose answer is lost must not let the client's retry with its key create the contact
 * again (docs/decisions.md "Ambiguous writes").
 */
export async function createContact<T>(p: Principal, input: CreateContactInput, answer: (contact: ContactRecord) => Promise<T>): Promise<T> {
  return retrying(async () => {
    const [organizationId, tickets] = await Promise.all([organizationFor(p.accountId, input.email, input.organizationId), repo.requesterCount(p.accountId, input.email)]);
    const c = newContact(p.accountId, input, organizationId);
    const made = await answer(c);
    await repo.createContact(c, tickets, answerWrites(made));
    return made;
  });
}

/**
 * The contact of an address, created if the account has none (an inbound
 * mail's sender, decisions §17): its id. Two mails from a new sender at once
 * meet at the email guard; the loser reads the winner's contact.
 */
export async function ensureContact(accountId: string, email: string, name: string | null): Promise<string | null> {
  if (email.length > CONTACT_EMAIL_MAX) return null;
  const known = await repo.contactByEmail(accountId, email);
  if (known) return known.contactId;
  try {
    return await retrying(async () => {
      const [organizationId, tickets] = await Promise.all([organizationFor(accountId, email, undefined), repo.requesterCount(accountId, email)]);
      const c = newContact(accountId, { name: name || email.slice(0, email.indexOf('@')), email }, organizationId);
      await repo.createContact(c, tickets);
      return c.id;
    });
  } catch (err) {
    const winner = await repo.contactByEmail(accountId, email);
    if (winner) return winner.contactId;
    throw err;
  }
}

export async function updateContact(p: Principal, id: string, input: UpdateContactInput): Promise<ContactRecord> {
  return retrying(async () => {
    const current = await requireContact(p.accountId, id);
    const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined)) as UpdateContactInput;
    if (!Object.keys(defined).length) return current;
    const countedOrg = await countedOrganization(p.accountId, current.organizationId);
    if (defined.organizationId && defined.organizationId !== countedOrg && !(await findOrganization(p.accountId, defined.organizationId))) {
      throw new ValidationError('No such organization', [{ field: 'organizationId', message: 'no such organization in this account' }]);
    }
    // A link to a deleted organization is dropped by the next write, whatever it changes.
    const next: ContactRecord = { ...current, organizationId: countedOrg, ...defined, updatedAt: new Date().toISOString(), version: current.version + 1 };
    const [before, after] = await Promise.all([
      repo.requesterCount(p.accountId, current.email),
      next.email.toLowerCase() === current.email.toLowerCase() ? null : repo.requesterCount(p.accountId, next.email),
    ]);
    await repo.updateContact(current, next, before, after ?? before, countedOrg);
    return next;
  });
}

export async function deleteContact(p: Principal, id: string): Promise<void> {
  await retrying(async () => {
    const c = await requireContact(p.accountId, id);
    const [tickets, countedOrg] = await Promise.all([repo.requesterCount(p.accountId, c.email), countedOrganization(p.accountId, c.organizationId)]);
    await repo.deleteContact(c, tickets, countedOrg, [tombstoneWrite('contact', p.accountId, c.id, new Date().toISOString())]);
  });
}

/**
 * An erasure's last step (decisions §23): the contact deleted as DELETE
 * would (its tombstone for the export, its words, its email guard, its
 * organization's counts), with `related` (the erasure's audit) in the same
 * transaction, then its email's ticket counter, which counts none by now.
 * 'gone' when the contact was already deleted (the counter still goes).
 */
export async function eraseContact(accountId: string, id: string, email: string, related: TxWrite[]): Promise<'erased' | 'gone'> {
  const outcome = await retrying(async () => {
    const c = await repo.getContact(accountId, id);
    if (!c) return 'gone' as const;
    const [tickets, countedOrg] = await Promise.all([repo.requesterCount(accountId, c.email), countedOrganization(accountId, c.organizationId)]);
    await repo.deleteContact(c, tickets, countedOrg, [tombstoneWrite('contact', accountId, c.id, new Date().toISOString()), ...related]);
    return 'erased' as const;
  });
  await repo.deleteRequesterCountIfEmpty(accountId, email);
  return outcome;
}

export async function listContacts(p: Principal, q: ListContactsQuery) {
  return repo.listContacts(p.accountId, { search: q.search, organizationId: q.organization_id, sortBy: q.sort_by, order: q.sort_order }, q.page, q.limit);
}

type OrgDeltas = Map<string, { contacts: number; tickets: number }>;

const addDelta = (deltas: OrgDeltas, orgId: string, d: { contacts?: number; tickets?: number }) => {
  const cur = deltas.get(orgId) ?? { contacts: 0, tickets: 0 };
  deltas.set(orgId, { contacts: cur.contacts + (d.contacts ?? 0), tickets: cur.tickets + (d.tickets ?? 0) });
};

/**
 * The writes that count tickets in (+1) or out (-1) for their requesters, for
 * the ticket's own transaction: requester counters, the linked organizations'
 * ticketCount, and, for a requester not yet known, a new contact (linked to
 * the organization of its domain) as real helpdesks do. Organization deltas
 * are summed, since a transaction may touch each item once.
 */
export async function requesterWrites(accountId: string, changes: { email: string; name: string | null; delta: 1 | -1 }[]): Promise<TxWrite[]> {
  const writes: TxWrite[] = [];
  const deltas: OrgDeltas = new Map();
  for (const { email, name, delta } of changes) {
    const known = await repo.contactByEmail(accountId, email);
    // Contacts hold emails of at most CONTACT_EMAIL_MAX characters; a longer requester is counted but gets no contact.
    if (known || delta < 0 || email.length > CONTACT_EMAIL_MAX) {
      writes.push(repo.requesterCountWrite(accountId, email, delta));
      // The ticket is counted for the organization the contact names when this commits, not when we read it.
      if (email.length <= CONTACT_EMAIL_MAX) writes.push(repo.contactGuardCheck(accountId, email, known));
      const orgId = await countedOrganization(accountId, known?.organizationId ?? null);
      if (orgId) addDelta(deltas, orgId, { tickets: delta });
      continue;
    }
    const [organizationId, tickets] = await Promise.all([organizationFor(accountId, email, undefined), repo.requesterCount(accountId, email)]);
    const contact = newContact(accountId, { name: name ?? email.slice(0, email.indexOf('@')), email }, organizationId);
    writes.push(...repo.createContactWrites(contact, null), repo.requesterCountWrite(accountId, email, 1, tickets.count));
    // The new contact's organization counts its earlier tickets (if a former contact had them) and this one.
    if (organizationId) addDelta(deltas, organizationId, { contacts: 1, tickets: tickets.count + 1 });
  }
  for (const [orgId, d] of deltas) if (d.contacts || d.tickets) writes.push(organizationCountersWrite(accountId, orgId, d));
  return writes;
}
