/**
 * Helpers for the end-to-end tests of contacts, organizations and messages
 * (the non-v1 support-desk resources with `{success, data, meta}` envelopes):
 * paths, request wrappers bound to one credential, arrange-step creators that
 * fail loudly, a page-number walker, envelope assertions, and direct
 * DynamoDB Local access for what the API cannot do (closing a ticket, outbox).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { Client, Response } from './api.ts';
import { outboxItems } from './desk.ts';

export const CONTACTS = '/helpdesk/api/contacts';
export const ORGS = '/helpdesk/api/organizations';
export const MESSAGES = '/helpdesk/api/messages';
export const TICKETS = '/helpdesk/api/v1/tickets';

export type Json = any;

/** Request wrappers bound to one credential (API key or session token). */
export function as(client: Client, token: string) {
  return {
    get: (path: string) => client.request('GET', path, { token }),
    post: (path: string, body: unknown) => client.request('POST', path, { token, body }),
    put: (path: string, body: unknown) => client.request('PUT', path, { token, body }),
    patch: (path: string, body: unknown) => client.request('PATCH', path, { token, body }),
    del: (path: string) => client.request('DELETE', path, { token }),
  };
}
export type Api = ReturnType<typeof as>;

/** Throw (with the answer) unless the status is the one expected: for arrange steps. */
export function must(res: Response, status: number, what: string): Json {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res.body;
}

/** A support-desk error envelope with the given status and code. */
export function expectDeskError(res: Response, status: number, code: string) {
  expect(res.status, `expected ${status} ${code}, got ${res.status} ${res.text.slice(0, 300)}`).toBe(status);
  expect(res.body).toMatchObject({ success: false, error: { code, message: expect.any(String) } });
}

/** A 422 VALIDATION_ERROR whose details name the field. */
export function expectValidation(res: Response, field: string) {
  expectDeskError(res, 422, 'VALIDATION_ERROR');
  expect(res.body.error.details, res.text).toEqual(expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]));
}

/** A 400 BAD_REQUEST (invalid query parameter) whose details name the parameter. */
export function expectBadQuery(res: Response, field: string) {
  expectDeskError(res, 400, 'BAD_REQUEST');
  expect(res.body.error.details, res.text).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
}

export const newOrg = async (d: Api, body: Record<string, unknown>): Promise<Json> => must(await d.post(ORGS, body), 201, 'create organization').data;
export const newContact = async (d: Api, body: Record<string, unknown>): Promise<Json> => must(await d.post(CONTACTS, body), 201, 'create contact').data;
export const newTicket = async (d: Api, ticket: Record<string, unknown> = {}): Promise<Json> =>
  must(await d.post(TICKETS, { ticket: { subject: 'Printer on fire', ...ticket } }), 201, 'create ticket').ticket;
export const getOrg = async (d: Api, id: string): Promise<Json> => must(await d.get(`${ORGS}/${id}`), 200, 'get organization').data;
export const getContact = async (d: Api, id: string): Promise<Json> => must(await d.get(`${CONTACTS}/${id}`), 200, 'get contact').data;
export const contactByEmail = async (d: Api, email: string): Promise<Json> => must(await d.get(`${CONTACTS}/by-email/${encodeURIComponent(email)}`), 200, 'contact by email').data;
export const getTicket = async (d: Api, id: string): Promise<Json> => must(await d.get(`${TICKETS}/${id}`), 200, 'get ticket').ticket;

/** The counters of an organization, as answered by GET. */
export const counts = async (d: Api, orgId: string) => {
  const o = await getOrg(d, orgId);
  return { contactCount: o.contactCount, ticketCount: o.ticketCount };
};

/**
 * Walk a page-number list from page 1 to meta.totalPages, checking that every
 * page's meta is exact; gives the items in order. `query` is the list query
 * without page (it must carry limit).
 */
export async function walkPages(d: Api, base: string, query: Record<string, string | number>, expectedTotal: number): Promise<Json[]> {
  const limit = Number(query.limit);
  const totalPages = Math.ceil(expectedTotal / limit);
  const items: Json[] = [];
  for (let page = 1; page <= Math.max(totalPages, 1); page++) {
    const qs = new URLSearchParams(Object.entries({ ...query, page }).map(([k, v]): [string, string] => [k, String(v)]));
    const res = await d.get(`${base}?${qs}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.success).toBe(true);
    expect(res.body.meta, `meta of page ${page}`).toEqual({ page, limit, total: expectedTotal, totalPages });
    const expectedSize = Math.max(0, Math.min(limit, expectedTotal - (page - 1) * limit));
    expect(res.body.data, `size of page ${page}`).toHaveLength(expectedSize);
    items.push(...res.body.data);
  }
  return items;
}

/** Run async jobs with at most `n` in flight (arrange steps with many records). */
export async function inBatches<T>(count: number, n: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, count) }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

/** Close a ticket the way an automation would (the API refuses status closed), straight through the repository. */
export async function closeTicketDirectly(accountId: string, ticketId: string): Promise<void> {
  const repo = await import('#shared/tickets/repository.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const current = await repo.getTicket(accountId, ticketId);
  if (!current) throw new Error(`no ticket ${ticketId}`);
  await transactWrite([repo.replaceTicketWrite({ ...current, status: 'closed', updatedAt: new Date().toISOString(), version: current.version + 1 }, current.version)]);
}

/** The stored version of a ticket (one more per committed change). */
export async function ticketVersion(accountId: string, ticketId: string): Promise<number> {
  const repo = await import('#shared/tickets/repository.ts');
  return (await repo.getTicket(accountId, ticketId))!.version;
}

/** Event details of an account's outbox items, read from DynamoDB Local. */
export async function outboxEvents(accountId: string): Promise<{ eventId: string; event: string; timestamp: string; data: Json }[]> {
  return (await outboxItems(accountId)).map((i) => i.detail);
}

/** Contact items of an account as stored (to prove what the API renders is what is stored). */
export async function storedContact(accountId: string, contactId: string): Promise<Json> {
  const repo = await import('#shared/contacts/repository.ts');
  return repo.getContact(accountId, contactId);
}

/**
 * Send a create as a careful client does: with an Idempotency-Key, sent again
 * with the same key while the answer is the retryable 503 (or 409, the first
 * try still running). Answers the final response and how many tries it took.
 */
export async function createRetried(send: (key: string) => Promise<Response>, key = randomUUID(), tries = 12): Promise<Response & { tries: number }> {
  for (let attempt = 1; ; attempt++) {
    const res = await send(key);
    if ((res.status !== 503 && res.status !== 409) || attempt >= tries) return Object.assign(res, { tries: attempt });
    await sleep(100 * attempt);
  }
}
