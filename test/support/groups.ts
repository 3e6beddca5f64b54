/** Helpers for the group end-to-end tests. */
import { expect } from 'vitest';
import type { Desk } from './desk.ts';

export const GROUPS = '/helpdesk/api/groups';

/** Create a group (arrange step); fails loudly unless 201. */
export async function newGroup(d: Desk, body: Record<string, unknown> = {}) {
  const res = await d.post(GROUPS, { name: `Group ${Math.random().toString(36).slice(2, 8)}`, ...body });
  if (res.status !== 201) throw new Error(`create group: ${res.status} ${res.text}`);
  return res.body.data;
}

/** Add members to a group (arrange step). */
export async function addMembers(d: Desk, groupId: string, members: (string | { userId: string; maxOpenTickets?: number | null; skills?: string[] })[]) {
  for (const m of members) {
    const res = await d.post(`${GROUPS}/${groupId}/members`, typeof m === 'string' ? { userId: m } : m);
    if (res.status !== 201) throw new Error(`add member: ${res.status} ${res.text}`);
  }
}

/** Many active agents at once, written straight through the users repository (no credentials needed). */
export async function insertAgents(accountId: string, n: number): Promise<string[]> {
  const users = await import('#shared/users/repository.ts');
  const { newId } = await import('#shared/ids.ts');
  const at = new Date().toISOString();
  const ids = Array.from({ length: n }, () => newId('usr'));
  await Promise.all(
    ids.map((id) =>
      users.createUser({
        id,
        accountId,
        email: `${id.toLowerCase()}@agents.example`,
        name: id,
        avatarUrl: null,
        role: 'member',
        status: 'active',
        createdAt: at,
        updatedAt: at,
        lastLoginAt: null,
        version: 1,
      }),
    ),
  );
  return ids;
}

/** Tally of values, e.g. assignee id -> number of tickets. */
export const tally = (values: (string | null)[]) => values.reduce<Record<string, number>>((acc, v) => ((acc[String(v)] = (acc[String(v)] ?? 0) + 1), acc), {});

/** The open-ticket counters the distribution test endpoint reports, per member. */
export async function memberLoads(d: Desk, groupId: string): Promise<Record<string, { openTickets: number; openTicketsInGroup: number; reason: string | null }>> {
  const res = await d.post(`${GROUPS}/${groupId}/distribution/test`, { ticket: {} });
  if (res.status !== 200) throw new Error(`distribution test: ${res.status} ${res.text}`);
  return Object.fromEntries(res.body.data.members.map((m: { userId: string; openTickets: number; openTicketsInGroup: number; reason: string | null }) => [m.userId, m]));
}

/** A support-desk error envelope with this status and code (and, if given, a detail naming the field). */
export function expectError(res: { status: number; body: any; text: string }, status: number, code: string, field?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.success).toBe(false);
  expect(res.body.error.code).toBe(code);
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
}
