import type { Principal } from '../auth/principal.ts';
import { contactsOfOrganization, unlinkContacts } from '../contacts/repository.ts';
import { NotFoundError } from '../domain/errors.ts';
import { newId } from '../ids.ts';
import { configuredProvider, safeLookup, type EnrichmentProvider } from './enrichment.ts';
import type { CreateOrganizationInput, ListOrganizationsQuery, Organization, UpdateOrganizationInput } from './model.ts';
import * as repo from './repository.ts';
import type { OrganizationRecord } from './repository.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { ORGANIZATION_CREATED, ORGANIZATION_EVENT_SOURCE } from './events.ts';

export const toOrganizationDto = ({ accountId: _a, updatedAt: _u, ...o }: OrganizationRecord): Organization => o;

let provider: EnrichmentProvider | null | undefined;
const enrichmentProvider = () => (provider === undefined ? (provider = configuredProvider()) : provider);

/** Replace the enrichment provider (tests, local tools). */
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
export async function createOrganization(p: Principal, input: CreateOrganizationInput): Promise<OrganizationRecord> {
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
  };
  const event = newDomainEvent(o.accountId, ORGANIZATION_CREATED, { organization: { id: o.id, organizationalDomain: o.organizationalDomain } }, now);
  await repo.createOrganization(o, outboxWrites([event], ORGANIZATION_EVENT_SOURCE));
  return o;
}

export async function updateOrganization(p: Principal, id: string, input: UpdateOrganizationInput): Promise<OrganizationRecord> {
  const current = await requireOrganization(p.accountId, id);
  const defined = Object.fromEntries(Object.entries(input).filter(([, v]) => v !== undefined));
  if (!Object.keys(defined).length) return current;
  return repo.updateOrganization(current, { ...defined, updatedAt: new Date().toISOString() });
}

/** Delete an organization; every linked contact gets organizationId null (found through gsi3, never a Scan). */
export async function deleteOrganization(p: Principal, id: string): Promise<void> {
  const o = await requireOrganization(p.accountId, id);
  await repo.deleteOrganization(o);
  // Contacts that changed meanwhile are re-read and unlinked again until none point here.
  for (let round = 0; round < 5; round++) {
    const linked = await contactsOfOrganization(p.accountId, id);
    if (!linked.length) return;
    await unlinkContacts(linked, new Date().toISOString());
  }
}

/** Enrich now: fill empty fields from the configured provider and answer the result (also used by the background consumer). */
export async function enrichOrganization(accountId: string, id: string): Promise<OrganizationRecord> {
  const o = await requireOrganization(accountId, id);
  const facts = await safeLookup(enrichmentProvider(), o.organizationalDomain);
  if (!facts) return o;
  try {
    return await repo.applyFacts(o, facts, new Date().toISOString());
  } catch (err) {
    // Someone filled a field meanwhile: their value wins; answer what is stored now.
    if ((err as Error).name === 'ConditionalCheckFailedException') return requireOrganization(accountId, id);
    throw err;
  }
}

export async function listOrganizations(p: Principal, q: ListOrganizationsQuery) {
  return repo.listOrganizations(p.accountId, { search: q.search, sortBy: q.sort_by, order: q.sort_order }, q.page, q.limit);
}
