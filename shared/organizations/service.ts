import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { NotFoundError } from '../domain/errors.ts';
import { createAnswerWrites, type CreateAnswer } from '../idempotency/service.ts';
import { tombstoneWrite } from '../exports/api.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { configuredProvider, safeLookup, type EnrichmentProvider } from './enrichment.ts';
import type { CreateOrganizationInput, ListOrganizationsQuery, Organization, UpdateOrganizationInput } from './model.ts';
import * as repo from './repository.ts';
import type { OrganizationRecord } from './repository.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_DELETED, ORGANIZATION_EVENT_SOURCE } from './events.ts';

export const toOrganizationDto = ({ accountId: _a, updatedAt: _u, version: _v, ...o }: OrganizationRecord): Organization => o;

/** Re-read and try again when the organization changed between our read and our write. */
const retrying = <T>(op: () => Promise<T>) => retryOnConflict(op, (err) => err instanceof repo.StaleOrganizationError);

let provider: EnrichmentProvider | null | undefined;
const enrichmentProvider = () => (provider === undefined ? (provider = configuredProvider()) : provider);

/** Replace the enrichment provider (tests, local tools). */
/** Organizations of the change index, as the incremental export answers them (GET's shape). */
export const exportOrganizations = async (_accountId: string, items: Record<string, unknown>[]) =>
  items.map(repo.organizationFromItem).map((o) => ({ id: o.id, updatedAt: o.updatedAt, object: toOrganizationDto(o) }));

export function setEnrichmentProvider(p: EnrichmentProvider | null): void {
  provider = p;
}

async function requireOrganization(accountId: string, id: string) {
  const o = await repo.getOrganization(accountId, id);
  if (!o) throw new NotFoundError('Organization');
  return o;
}

export const getOrganization = (p: Principal, id: string) => requireOrganization(p.accountId, id);

/**
 * Create an organization. Its organization.created event commits with it
 * (outbox), so background enrichment always follows.
 */
export async function createOrganization(p: Principal, input: CreateOrganizationInput, opts: CreateAnswer<OrganizationRecord> = {}): Promise<OrganizationRecord> {
  const now = new Date().toISOString();
  const o: OrganizationRecord = {
    id: newId('org'),
    accountId: p.accountId,
    name: input.name ?? null,
    organizationalDomain: input.organizationalDomain,
    country: null,
    industry: null,
    employeeCount: null,
    yearlyRevenue: null,
    logoUrl: null,
    contactCount: 0,
    ticketCount: 0,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  const event = newDomainEvent(o.accountId, ORGANIZATION_CREATED, { organization: { id: o.id, organizationalDomain: o.organizationalDomain } }, now);
  // A commit whose answer is lost must not let the client's retry with its key create it again (docs/decisions.md
  // "Ambiguous writes"): the key holds the answer from the same transaction.
  await repo.createOrganization(o, [...outboxWrites([event], ORGANIZATION_EVENT_SOURCE), ...createAnswerWrites(opts, o)]);
  return o;
}

export async function updateOrganization(p: Principal, id: string, input: UpdateOrganizationInput): Promise<OrganizationRecord> {
  return retrying(async () => {
    const current = await requireOrganization(p.accountId, id);
    const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
    if (!Object.keys(defined).length) return current;
    return repo.updateOrganization(current, { ...defined, updatedAt: new Date().toISOString() });
  });
}

/** Contacts unlinked per request; the organization.deleted consumer unlinks the rest. */
const UNLINK_IN_REQUEST = 100;

/**
 * The contacts' side of an organization's delete: unlink up to `max` of its
 * contacts, answering whether all are done. The contacts module owns it
 * (shared/contacts/organization-unlink.ts) and sits above this one; the
 * caller passes it in.
 */
export type UnlinkContacts = (accountId: string, orgId: string, max: number) => Promise<boolean>;

/**
 * Delete an organization. Its organization.deleted event commits with it, so
 * the unlinking of its contacts always finishes in the background; the first
 * contacts are unlinked right away (`unlinkContacts`). A contact still naming
 * it meanwhile is read and written as unlinked (contacts service), so nothing
 * breaks.
 */
export async function deleteOrganization(p: Principal, id: string, unlinkContacts: UnlinkContacts): Promise<void> {
  const o = await requireOrganization(p.accountId, id);
  const event = newDomainEvent(o.accountId, ORGANIZATION_DELETED, { organization: { id: o.id, organizationalDomain: o.organizationalDomain } });
  await repo.deleteOrganization(o, [...outboxWrites([event], ORGANIZATION_EVENT_SOURCE), tombstoneWrite('organization', p.accountId, o.id, event.timestamp)]);
  try {
    await unlinkContacts(p.accountId, id, UNLINK_IN_REQUEST);
  } catch (err) {
    // The delete has committed and its event will finish the unlinking: the request still succeeded.
    logger.warn('organization deleted; unlinking left to the background', { accountId: p.accountId, organizationId: id, err });
  }
}

/** Enrich now: fill empty fields from the configured provider and answer the result (also used by the background consumer). */
export async function enrichOrganization(accountId: string, id: string): Promise<OrganizationRecord> {
  const facts = await safeLookup(enrichmentProvider(), (await requireOrganization(accountId, id)).organizationalDomain);
  if (!facts) return requireOrganization(accountId, id);
  return retryOnConflict(
    async () => {
      const o = await requireOrganization(accountId, id);
      return repo.applyFacts(o, facts, new Date().toISOString());
    },
    // Someone changed the organization meanwhile: re-read; a field they filled keeps their value.
    (err) => err instanceof repo.StaleOrganizationError,
  );
}

export async function listOrganizations(p: Principal, q: ListOrganizationsQuery) {
  return repo.listOrganizations(p.accountId, { search: q.search, sortBy: q.sort_by, order: q.sort_order }, q.page, q.limit);
}
