import { BatchGetCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys, textSortKey } from '../db/keys.ts';
import { counterWrite, numberedPage, queryAll, readCounter } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../domain/errors.ts';
import type { CompanyFacts, Organization } from './model.ts';

export interface OrganizationRecord extends Organization {
  accountId: string;
  updatedAt: string;
  /** Optimistic lock; organizations stored before it existed read as 0. */
  version: number;
}

/** The organization changed or went away between our read and our write; the caller re-reads and tries again. */
export class StaleOrganizationError extends ConflictError {}

const FIELDS: (keyof OrganizationRecord)[] = [
  'id',
  'accountId',
  'name',
  'organizationalDomain',
  'country',
  'industry',
  'employeeCount',
  'yearlyRevenue',
  'logoUrl',
  'contactCount',
  'ticketCount',
  'createdAt',
  'updatedAt',
  'version',
];
const toRecord = (i: Record<string, unknown>) => {
  const r = Object.fromEntries(FIELDS.map((f) => [f, i[f] ?? null])) as unknown as OrganizationRecord;
  r.contactCount = Number(r.contactCount ?? 0);
  r.ticketCount = Number(r.ticketCount ?? 0);
  r.version = Number(r.version ?? 0);
  return r;
};

/** Sort keys for name (gsi1) and domain (gsi2); search text covers both. */
const indexAttributes = (o: Pick<OrganizationRecord, 'accountId' | 'id' | 'name' | 'organizationalDomain'>) => ({
  gsi1pk: keys.organizationsIndex(o.accountId),
  gsi1sk: textSortKey(o.name ?? '', o.id),
  gsi2pk: keys.organizationsIndex(o.accountId),
  gsi2sk: textSortKey(o.organizationalDomain, o.id),
  searchText: `${(o.name ?? '').toLowerCase()}\n${o.organizationalDomain}`,
});

const domainGuard = (o: Pick<OrganizationRecord, 'accountId' | 'id' | 'organizationalDomain'>): TxWrite => ({
  item: {
    Put: {
      TableName: tableName(),
      Item: { ...keys.organizationDomain(o.accountId, o.organizationalDomain), type: 'orgDomain', organizationId: o.id },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  },
  onConditionFailed: () => new AlreadyExistsError(`An organization with domain ${o.organizationalDomain} already exists`),
});

/** The write holds only if nobody changed the organization since `o` was read. */
const versionCondition = (o: OrganizationRecord) =>
  o.version ? { expr: 'version = :v', values: { ':v': o.version } } : { expr: 'attribute_exists(pk) AND attribute_not_exists(version)', values: {} };

/** Create an organization and claim its domain; `related` (e.g. its outbox event) commits with it. */
export async function createOrganization(o: OrganizationRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    {
      item: { Put: { TableName: tableName(), Item: { ...keys.organization(o.accountId, o.id), type: 'organization', ...o, ...indexAttributes(o) }, ConditionExpression: 'attribute_not_exists(pk)' } },
    },
    domainGuard(o),
    counterWrite(keys.listCounter(o.accountId, 'ORGS'), 1),
    ...related,
  ]);
}

export async function getOrganization(accountId: string, id: string): Promise<OrganizationRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.organization(accountId, id) }));
  return out.Item ? toRecord(out.Item) : null;
}

/** Organizations by id, for rendering contacts' organizationName (one BatchGet per 100). */
export async function getOrganizations(accountId: string, ids: string[]): Promise<Map<string, OrganizationRecord>> {
  const found = new Map<string, OrganizationRecord>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 100) {
    let requestKeys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((id) => keys.organization(accountId, id));
    while (requestKeys?.length) {
      const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requestKeys } } }));
      for (const item of out.Responses?.[tableName()] ?? []) found.set(item.id as string, toRecord(item));
      requestKeys = out.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

/** The organization owning a domain, via the domain guard. */
export async function organizationIdByDomain(accountId: string, domain: string): Promise<string | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.organizationDomain(accountId, domain) }));
  return (out.Item?.organizationId as string | undefined) ?? null;
}

export type OrganizationChanges = Partial<Pick<OrganizationRecord, 'name' | 'organizationalDomain' | keyof CompanyFacts>> & { updatedAt: string };

/**
 * Update attributes (never the counters, which only move with the changes they
 * count); a new domain moves the guard. Versioned: two concurrent domain
 * changes cannot both move the guard from the same old domain and orphan one.
 */
export async function updateOrganization(current: OrganizationRecord, changes: OrganizationChanges): Promise<OrganizationRecord> {
  const next = { ...current, ...changes, version: current.version + 1 };
  const set: Record<string, unknown> = { ...changes, ...indexAttributes(next), version: next.version };
  const cond = versionCondition(current);
  const writes: TxWrite[] = [
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.organization(current.accountId, current.id),
          UpdateExpression: `SET ${Object.keys(set)
            .map((k) => `#${k} = :${k}`)
            .join(', ')}`,
          ConditionExpression: cond.expr,
          ExpressionAttributeNames: Object.fromEntries(Object.keys(set).map((k) => [`#${k}`, k])),
          ExpressionAttributeValues: { ...Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v])), ...cond.values },
        },
      },
      onConditionFailed: () => new StaleOrganizationError('The organization was changed concurrently'),
    },
  ];
  if (next.organizationalDomain !== current.organizationalDomain) {
    writes.push({ item: { Delete: { TableName: tableName(), Key: keys.organizationDomain(current.accountId, current.organizationalDomain) } } }, domainGuard(next));
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
    {
      item: { Delete: { TableName: tableName(), Key: keys.organization(o.accountId, o.id), ConditionExpression: 'attribute_exists(pk)' } },
      onConditionFailed: () => new NotFoundError('Organization'),
    },
    { item: { Delete: { TableName: tableName(), Key: keys.organizationDomain(o.accountId, o.organizationalDomain) } } },
    ...related,
    counterWrite(keys.listCounter(o.accountId, 'ORGS'), -1),
  ]);
}

/** Does the organization exist? (a contact may still name one whose deletion is being finished) */
export async function organizationExists(accountId: string, id: string): Promise<boolean> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.organization(accountId, id), ProjectionExpression: 'pk' }));
  return Boolean(out.Item);
}

/** Counter write for an organization's contactCount/ticketCount, inside the transaction of the change it counts. */
export function organizationCountersWrite(accountId: string, orgId: string, delta: { contacts?: number; tickets?: number }): TxWrite {
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.organization(accountId, orgId),
        UpdateExpression: 'ADD contactCount :c, ticketCount :t',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':c': delta.contacts ?? 0, ':t': delta.tickets ?? 0 },
      },
    },
    // Deleted since the caller read the link: the caller re-reads and counts nothing for it.
    onConditionFailed: () => new StaleOrganizationError('The organization was deleted meanwhile'),
  };
}

/**
 * Fill enrichment facts only where still empty (a hand-set value is never
 * overwritten). Versioned like PATCH, since the index attributes written here
 * derive from the domain and name we read.
 */
export async function applyFacts(o: OrganizationRecord, facts: CompanyFacts, now: string): Promise<OrganizationRecord> {
  const fill = Object.entries(facts).filter(([k, v]) => v !== undefined && v !== null && (o as unknown as Record<string, unknown>)[k] === null) as [keyof CompanyFacts, string][];
  if (!fill.length) return o;
  const changes: OrganizationChanges = { updatedAt: now, ...Object.fromEntries(fill) };
  const next = { ...o, ...changes, version: o.version + 1 };
  const set: Record<string, unknown> = { ...changes, ...indexAttributes(next), version: next.version };
  const cond = versionCondition(o);
  await ddb.send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.organization(o.accountId, o.id),
      UpdateExpression: `SET ${Object.keys(set)
        .map((k) => `#${k} = :${k}`)
        .join(', ')}`,
      ConditionExpression: cond.expr,
      ExpressionAttributeNames: Object.fromEntries(Object.keys(set).map((k) => [`#${k}`, k])),
      ExpressionAttributeValues: { ...Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v])), ...cond.values },
    }),
  );
  return next;
}

export interface OrganizationFilter {
  search?: string;
  sortBy: 'name' | 'organizational_domain' | 'created_at' | 'contact_count';
  order: 'asc' | 'desc';
}

/** A numbered page of organizations with the exact total. contact_count order is computed in memory over the account's organizations. */
export async function listOrganizations(accountId: string, f: OrganizationFilter, page: number, limit: number) {
  const filter: { filter?: string; names: Record<string, string>; values: Record<string, unknown> } = f.search
    ? { filter: 'contains(#s, :s)', names: { '#s': 'searchText' }, values: { ':s': f.search.toLowerCase() } }
    : { names: {}, values: {} };
  const forward = f.order === 'asc';
  if (f.sortBy === 'contact_count') {
    const all = (
      await queryAll<Record<string, unknown>>({
        keyCondition: 'pk = :pk AND begins_with(sk, :p)',
        filter: filter.filter,
        names: filter.names,
        values: { ...filter.values, ':pk': keys.accountPk(accountId), ':p': keys.organizationPrefix },
        forward: true,
      })
    ).map(toRecord);
    all.sort((a, b) => (a.contactCount - b.contactCount || a.id.localeCompare(b.id)) * (forward ? 1 : -1));
    return { items: all.slice((page - 1) * limit, page * limit), total: all.length };
  }
  const q =
    f.sortBy === 'created_at'
      ? { keyCondition: 'pk = :pk AND begins_with(sk, :p)', values: { ':pk': keys.accountPk(accountId), ':p': keys.organizationPrefix } }
      : { index: f.sortBy === 'name' ? ('gsi1' as const) : ('gsi2' as const), keyCondition: `${f.sortBy === 'name' ? 'gsi1' : 'gsi2'}pk = :pk`, values: { ':pk': keys.organizationsIndex(accountId) } };
  // Unfiltered, the total is the account's organization counter (read beside the page), not a walk of the whole list.
  const total = f.search ? undefined : readCounter(keys.listCounter(accountId, 'ORGS'));
  const result = await numberedPage<Record<string, unknown>>({ ...q, filter: filter.filter, names: filter.names, values: { ...q.values, ...filter.values }, forward }, page, limit, total);
  return { items: result.items.map(toRecord), total: result.total };
}
