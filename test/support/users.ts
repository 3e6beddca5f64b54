import { request as httpRequest } from 'node:http';
import { expect } from 'vitest';
import type { Client, Response } from './api.ts';

/** The user-management base path. */
export const USERS = '/playbook/api/v1/users';

/** A user-management error envelope: `{error: {code, message, field?}}` and nothing else. */
export function expectUserError(res: Response, status: number, code: string, field?: string) {
  expect(res.status, `${status} ${code} expected, got ${res.status} ${res.text.slice(0, 300)}`).toBe(status);
  expect(res.body).toEqual({ error: { code, message: expect.any(String), ...(field ? { field } : {}) } });
  expect(res.body.error.message.length).toBeGreaterThan(0);
}

/** The X-RateLimit-* headers of an authenticated answer, as numbers. */
export function rateLimitHeaders(res: Response) {
  return {
    limit: Number(res.headers.get('x-ratelimit-limit')),
    remaining: Number(res.headers.get('x-ratelimit-remaining')),
    reset: Number(res.headers.get('x-ratelimit-reset')),
  };
}

/** Unix seconds of the calendar-minute boundary after `ms`. */
export const nextMinuteBoundary = (ms: number) => Math.floor(ms / 60_000) * 60 + 60;

export interface ListedUser {
  id: string;
  email: string;
  name: string;
  role: string;
  status: string;
  created_at: string;
}

/**
 * Follow a user list from `firstQuery` to the end. Later pages send the cursor,
 * the first query's `limit` (a page size is per request, not carried by the
 * cursor) and `extraOnCursor` (to prove the cursor, not the parameters, decides).
 * Checks every page's pagination block on the way.
 */
export async function walkUsers(client: Client, token: string, firstQuery: string, extraOnCursor = '') {
  const pages: ListedUser[][] = [];
  let res = await client.request('GET', `${USERS}?${firstQuery}`, { token });
  expect(res.status, res.text).toBe(200);
  const total: number = res.body.pagination.total_count;
  const limit = new URLSearchParams(firstQuery).get('limit');
  const pageSize = limit ? `&limit=${limit}` : '';
  for (let guard = 0; guard < 200; guard++) {
    expect(res.status, res.text).toBe(200);
    const { data, pagination } = res.body;
    pages.push(data);
    expect(pagination.total_count).toBe(total);
    expect(pagination.has_more).toBe(pagination.next_cursor !== null);
    if (pagination.has_more && limit) expect(data.length).toBe(Number(limit));
    if (!pagination.has_more) break;
    res = await client.request('GET', `${USERS}?cursor=${encodeURIComponent(pagination.next_cursor)}${pageSize}${extraOnCursor}`, { token });
  }
  return { pages, users: pages.flat(), total };
}

/**
 * A raw HTTP/1.1 request, for what fetch will not send (a GET with a body,
 * odd methods, a body with no content type).
 */
export function rawHttp(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { ...headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
