/**
 * Helpers for the support-desk v1 end-to-end tests (tickets, ticket fields,
 * options): paths, thin request wrappers, a links.next walker, and direct
 * DynamoDB Local access for what the API cannot do (closed tickets, outbox).
 */
import type { Client, Response } from './api.ts';

export const TICKETS = '/helpdesk/api/v1/tickets';
export const FIELDS = '/helpdesk/api/v1/ticket_fields';
export const optionsPath = (fieldId: string) => `${FIELDS}/${fieldId}/options`;

export const SYSTEM_FIELD_IDS = ['system_subject', 'system_status', 'system_priority', 'system_type', 'system_assignee', 'system_requester', 'system_tags'] as const;
export const FIELD_TYPES = ['text', 'textarea', 'number', 'decimal', 'checkbox', 'date', 'dropdown', 'multiselect', 'regex'] as const;
export const STATUS_ORDER = ['new', 'open', 'pending', 'resolved', 'closed'] as const;
export const PRIORITY_ORDER = ['low', 'normal', 'high', 'urgent'] as const;

export type Json = any;

/** Request wrappers bound to one credential. */
export function as(client: Client, token: string) {
  return {
    get: (path: string) => client.request('GET', path, { token }),
    post: (path: string, body: unknown) => client.request('POST', path, { token, body }),
    put: (path: string, body: unknown) => client.request('PUT', path, { token, body }),
    del: (path: string) => client.request('DELETE', path, { token }),
    raw: (method: string, path: string, rawBody: string) => client.request(method, path, { token, rawBody }),
  };
}
export type Desk = ReturnType<typeof as>;

function expectStatus(res: Response, status: number, what: string) {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text}`);
}

/** Create a ticket (arrange step); fails loudly unless 201. */
export async function newTicket(d: Desk, ticket: Record<string, unknown> = {}): Promise<Json> {
  const res = await d.post(TICKETS, { ticket: { subject: 'Printer on fire', ...ticket } });
  expectStatus(res, 201, 'create ticket');
  return res.body.ticket;
}

/** Create a custom ticket field (arrange step); fails loudly unless 201. */
export async function newField(d: Desk, field: Record<string, unknown>): Promise<Json> {
  const res = await d.post(FIELDS, { ticketField: { title: `Field ${Math.random().toString(36).slice(2, 8)}`, ...field } });
  expectStatus(res, 201, 'create ticket field');
  return res.body.ticketField;
}

/** One valid value per field type, given the options/regex created by `nineFieldSpecs`. */
export const nineFieldSpecs = (): Record<(typeof FIELD_TYPES)[number], Record<string, unknown>> => ({
  text: { type: 'text' },
  textarea: { type: 'textarea' },
  number: { type: 'number' },
  decimal: { type: 'decimal' },
  checkbox: { type: 'checkbox' },
  date: { type: 'date' },
  dropdown: {
    type: 'dropdown',
    options: [
      { name: 'Gold', value: 'gold' },
      { name: 'Silver', value: 'silver' },
    ],
  },
  multiselect: {
    type: 'multiselect',
    options: [
      { name: 'Red', value: 'red' },
      { name: 'Green', value: 'green' },
      { name: 'Blue', value: 'blue' },
    ],
  },
  regex: { type: 'regex', regexPattern: '^[A-Z]{3}-\\d+$' },
});

/**
 * Follow links.next from a first path to the end, collecting every page.
 * Stops (and fails) after maxPages to turn a cursor loop into a failure instead of a hang.
 */
export async function walk(d: Desk, firstPath: string, listKey: string, maxPages = 60): Promise<{ pages: Response[]; items: Json[] }> {
  const pages: Response[] = [];
  let path: string | null = firstPath;
  while (path) {
    if (pages.length >= maxPages) throw new Error(`more than ${maxPages} pages from ${firstPath}`);
    const res = await d.get(path);
    expectStatus(res, 200, `GET ${path}`);
    pages.push(res);
    path = res.body.links.next;
  }
  return { pages, items: pages.flatMap((p) => p.body[listKey]) };
}

/** The query parameters of a relative link, as a plain object. */
export function linkParams(link: string): { path: string; params: Record<string, string> } {
  const u = new URL(link, 'http://local');
  return { path: u.pathname, params: Object.fromEntries(u.searchParams) };
}

/** A ticket as the repository stores it, created at `at` (ids are time-ordered); `overrides` set any field. */
export async function ticketRecord(accountId: string, at = new Date(), overrides: Record<string, unknown> = {}) {
  const { newId } = await import('#shared/ids.ts');
  return {
    id: newId('tkt', at.getTime()),
    accountId,
    subject: 'Stored directly',
    status: 'open',
    priority: 'normal',
    type: 'question',
    assigneeId: null,
    requesterEmail: null,
    requesterName: null,
    groupId: null,
    tags: [],
    customFields: [],
    mergedInto: null,
    satisfactionRating: null,
    createdAt: at.toISOString(),
    updatedAt: at.toISOString(),
    version: 1,
    ...overrides,
  } as Json;
}

/** Store tickets straight into the table as the repository writes them (a large account without thousands of API calls). */
export async function storeTickets(records: Json[]): Promise<void> {
  const { replaceTicketWrite } = await import('#shared/tickets/repository.ts');
  const { batchPut } = await import('#shared/db/query.ts');
  await batchPut(
    records.map((t) => replaceTicketWrite(t, 0).item.Put!.Item!),
    { concurrency: 8 },
  );
}

/** Write a ticket straight through the repository (e.g. a closed one, which only automations may produce). */
export async function insertTicketRecord(accountId: string, overrides: Record<string, unknown> = {}): Promise<Json> {
  const repo = await import('#shared/tickets/repository.ts');
  const record = await ticketRecord(accountId, new Date(), { subject: 'Closed by automation', status: 'closed', ...overrides });
  await repo.createTicket(record, []);
  const { accountId: _a, version: _v, ...dto } = record;
  return dto;
}

/** An account's items whose sort key begins with `prefix` (of one item type, if given), read straight from DynamoDB Local, consistently. */
export async function accountItems(accountId: string, prefix: string, type?: string): Promise<Json[]> {
  const { ddb, tableName } = await import('#shared/db/client.ts');
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const items: Json[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ...(type ? { FilterExpression: '#type = :type', ExpressionAttributeNames: { '#type': 'type' } } : {}),
        ExpressionAttributeValues: { ':pk': `A#${accountId}`, ':p': prefix, ...(type ? { ':type': type } : {}) },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/** Outbox items of an account (pk A#<accountId>, sk OUTBOX#...). */
export const outboxItems = (accountId: string): Promise<Json[]> => accountItems(accountId, 'OUTBOX#');

/** Count of answers per status code, e.g. {201: 1, 409: 29}. */
export const statusCounts = (responses: Response[]) => responses.reduce<Record<number, number>>((acc, r) => ((acc[r.status] = (acc[r.status] ?? 0) + 1), acc), {});
