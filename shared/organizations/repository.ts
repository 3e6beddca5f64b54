import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { textSortKey } from '../db/keys.ts';
import { organizationEntities } from '../db/entities/organizations.ts';
import { listCounter } from '../db/list-counter.ts';
import { numberedPage, queryAll, queryPage, type Key } from '../db/query.ts';
import { transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../domain/errors.ts';
import { indexWrites, searchIndex, type Searchable } from '../search/word-index.ts';
import { recordWords, searchFilter, searchTerms, searchText } from '../search/words.ts';
import type { CompanyFacts, Organization } from './model.ts';
import { historyShard } from '../db/shard.ts';

export interface OrganizationRecord extends Organization {
  accountId: string;
  updatedAt: string;
  /** Optimistic lock; organizations stored before it existed read as 0. */
  version: number;
}

/** The organization changed or went away between our read and our write; the caller re-reads and tries again. */
export class StaleOrganizationError extends ConflictError {}

const organizations = bindEntity<OrganizationRecord>(organizationEntities.organization, {
  fields: ['id', 'accountId', 'name', 'organizationalDomain', 'country', 'industry', 'employeeCount', 'yearlyRevenue', 'logoUrl', 'contactCount', 'ticketCount', 'createdAt', 'updatedAt', 'version'],
  // An organization without a name sorts first by name.
  keyValues: (o) => ({ sortName: o.name ?? '', changeShard: historyShard(o.id) }),
  extra: (o) => ({ searchText: searchText(wordsOf(o)) }),
  normalize: (r) => ({ ...r, contactCount: Number(r.contactCount ?? 0), ticketCount: Number(r.ticketCount ?? 0), version: Number(r.version ?? 0) }),
});

const wordsOf = (o: OrganizationRecord) => recordWords({ names: [o.name], addresses: [o.organizationalDomain] });
/** What the word index holds of an organization (decisions §13). */
const searchable = (o: OrganizationRecord): Searchable => ({
  accountId: o.accountId,
  id: o.id,
  words: wordsOf(o),
  sort: { name: textSortKey(o.name ?? '', o.id), organizational_domain: textSortKey(o.organizationalDomain, o.id) },
});

const domains = bindEntity<{ accountId: string; domain: string; organizationId: string }>(organizationEntities.organizationDomain, { fields: ['organizationId'] });

const domainGuard = (o: Pick<OrganizationRecord, 'accountId' | 'id' | 'organizationalDomain'>): TxWrite =>
  domains.put(
    { accountId: o.accountId, domain: o.organizationalDomain, organizationId: o.id },
    conditions.absent(() => new AlreadyExistsError(`An organization with domain ${o.organizationalDomain} already exists`)),
  );

/** The write holds only if nobody changed the organization since `o` was read (organizations stored before versions read as 0). */
const versionCondition = (o: OrganizationRecord): Condition => {
  const error = () => new StaleOrganizationError('The organization was changed concurrently');
  return o.version ? conditions.version('version', o.version, error) : { expr: 'attribute_exists(pk) AND attribute_not_exists(version)', error };
};

/** Create an organization and claim its domain; `related` (e.g. its outbox event) commits with it. */
export async function createOrganization(o: OrganizationRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([organizations.put(o, conditions.absent()), domainGuard(o), ...indexWrites('organization', null, searchable(o)), listCounter.write(o.accountId, 'ORGS', 1), ...related]);
}

export async function getOrganization(accountId: string, id: string): Promise<OrganizationRecord | null> {
  return organizations.get({ accountId, id });
}

/** Organizations by id, for rendering contacts' organizationName. */
export async function getOrganizations(accountId: string, ids: string[]): Promise<Map<string, OrganizationRecord>> {
  const found = await organizations.getMany(ids.map((id) => ({ accountId, id })));
  return new Map(found.map((o) => [o.id, o]));
}

/** The organization owning a domain, via the domain guard. */
export async function organizationIdByDomain(accountId: string, domain: string): Promise<string | null> {
  return (await domains.get({ accountId, domain }))?.organizationId ?? null;
}

export type OrganizationChanges = Partial<Pick<OrganizationRecord, 'name' | 'organizationalDomain' | keyof CompanyFacts>> & { updatedAt: string };

/**
 * Update attributes (never the counters, which only move with the changes they
 * count); a new domain moves the guard. Versioned: two concurrent domain
 * changes cannot both move the guard from the same old domain and orphan one.
 */
export async function updateOrganization(current: OrganizationRecord, changes: OrganizationChanges): Promise<OrganizationRecord> {
  const next = { ...current, ...changes, version: current.version + 1 };
  const writes: TxWrite[] = [organizations.update(current, next, versionCondition(current)), ...indexWrites('organization', searchable(current), searchable(next))];
  if (next.organizationalDomain !== current.organizationalDomain) {
    writes.push(domains.delete({ accountId: current.accountId, domain: current.organizationalDomain }), domainGuard(next));
  }
  await transactWrite(writes);
  return next;
}

/**
 * Delete the organization and release its domain; `related` (its
 * organization.deleted event, which drives the unlinking of its contacts)
 * commits with it.
 */
export async function deleteOrganization(o: OrganizationRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    organizations.delete(
      o,
      conditions.present(() => new NotFoundError('Organization')),
    ),
    domains.delete({ accountId: o.accountId, domain: o.organizationalDomain }),
    ...indexWrites('organization', searchable(o), null),
    ...related,
    listCounter.write(o.accountId, 'ORGS', -1),
  ]);
}

/** Does the organization exist? (a contact may still name one whose deletion is being finished) */
export async function organizationExists(accountId: string, id: string): Promise<boolean> {
  return Boolean(await organizations.get({ accountId, id }, { projection: ['pk'] }));
}

/** Counter write for an organization's contactCount/ticketCount, inside the transaction of the change it counts. */
export function organizationCountersWrite(accountId: string, orgId: string, delta: { contacts?: number; tickets?: number }): TxWrite {
  return organizations.updateAttributes(
    { accountId, id: orgId },
    { add: { contactCount: delta.contacts ?? 0, ticketCount: delta.tickets ?? 0 } },
    // Deleted since the caller read the link: the caller re-reads and counts nothing for it.
    conditions.present(() => new StaleOrganizationError('The organization was deleted meanwhile')),
  );
}

/**
 * Fill enrichment facts only where still empty (a hand-set value is never
 * overwritten). Versioned like PATCH, since the index attributes written here
 * derive from the domain and name we read.
 */
export async function applyFacts(o: OrganizationRecord, facts: CompanyFacts, now: string): Promise<OrganizationRecord> {
  const fill = Object.entries(facts).filter(([k, v]) => v !== undefined && v !== null && (o as unknown as Record<string, unknown>)[k] === null) as [keyof CompanyFacts, string][];
  if (!fill.length) return o;
  const next = { ...o, updatedAt: now, ...Object.fromEntries(fill), version: o.version + 1 };
  await writeNow(organizations.update(o, next, versionCondition(o)));
  return next;
}

export interface OrganizationFilter {
  search?: string;
  sortBy: 'name' | 'organizational_domain' | 'created_at' | 'contact_count';
  order: 'asc' | 'desc';
}

const SORT_PATTERN = { name: 'byName', organizational_domain: 'byDomain', created_at: 'byCreated', contact_count: 'byCreated' } as const;

/**
 * A numbered page of organizations with the exact total. A search reads the
 * word index (decisions §13); contact_count order is computed in memory (over
 * the matches of a search, else over the account's organizations).
 */
export async function listOrganizations(accountId: string, f: OrganizationFilter, page: number, limit: number) {
  const terms = f.search ? searchTerms(f.search) : [];
  const forward = f.order === 'asc';
  const byContactCount = (all: OrganizationRecord[]) => {
    all.sort((a, b) => (a.contactCount - b.contactCount || a.id.localeCompare(b.id)) * (forward ? 1 : -1));
    return { items: all.slice((page - 1) * limit, page * limit), total: all.length };
  };
  if (terms.length) {
    const byCount = f.sortBy === 'contact_count';
    const hits = await searchIndex(accountId, 'organization', terms, { sortBy: byCount || f.sortBy === 'created_at' ? 'created' : f.sortBy, forward });
    if (!hits.truncated) {
      if (byCount) return byContactCount(await organizations.getMany(hits.ids.map((id) => ({ accountId, id }))));
      const ids = hits.ids.slice((page - 1) * limit, page * limit);
      const byId = new Map((await organizations.getMany(ids.map((id) => ({ accountId, id })))).map((o) => [o.id, o]));
      return { items: ids.flatMap((id) => byId.get(id) ?? []), total: hits.ids.length };
    }
  }
  const filter = terms.length ? searchFilter(terms) : undefined;
  if (f.sortBy === 'contact_count') return byContactCount((await queryAll<Record<string, unknown>>(organizations.query('byCreated', { accountId }, { filter }))).map(organizations.fromItem));
  // Unfiltered, the total is the account's organization counter (read beside the page), not a walk of the whole list.
  const total = terms.length ? undefined : listCounter.read(accountId, 'ORGS');
  const result = await numberedPage<Record<string, unknown>>(organizations.query(SORT_PATTERN[f.sortBy], { accountId }, { forward, filter }), page, limit, total);
  return { items: result.items.map(organizations.fromItem), total: result.total };
}

/** Index a page of organizations written before the word index existed (admin reindex); see reindexContacts. */
export async function reindexOrganizations(accountId: string, limit: number, startKey?: Key): Promise<{ records: number; nextKey?: Key }> {
  const page = await queryPage<Record<string, unknown>>({ ...organizations.query('byCreated', { accountId }), limit, startKey });
  await Promise.all(
    page.items.map(organizations.fromItem).map((o) =>
      transactWrite([organizations.updateAttributes(o, { set: { searchText: searchText(wordsOf(o)) } }, versionCondition(o)), ...indexWrites('organization', null, searchable(o))]).catch((err) => {
        if (!(err instanceof StaleOrganizationError)) throw err;
      }),
    ),
  );
  return { records: page.items.length, nextKey: page.nextKey };
}

/** An organization from an item of its indexes (the change index of the incremental export projects whole items). */
export const organizationFromItem = (item: Record<string, unknown>): OrganizationRecord => organizations.fromItem(item);
