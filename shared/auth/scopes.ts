/**
 * API key scopes (decisions §18): what a key may do on top of its user's role.
 * `users:*` cover the user-management interface (`/playbook`), `desk:*` the
 * support desk (`/helpdesk`); `read` allows GET, `write` every method. A
 * session token, and a key stored before keys had scopes, has every scope.
 * Pure functions: the authorizer carries a key's scopes in its answer and the
 * group functions' middleware checks them on every request.
 */
export const SCOPES = ['users:read', 'users:write', 'desk:read', 'desk:write'] as const;
export type Scope = (typeof SCOPES)[number];

/** By interface (shared/http/contract.ts `Interface`, spelled out here: importing it would close an import cycle through principal.ts). */
const AREA: Record<'playbook' | 'helpdesk', 'users' | 'desk'> = { playbook: 'users', helpdesk: 'desk' };

/** The scope a request needs: its interface's area, `read` for GET and `write` for every other method. */
export const scopeNeeded = (method: string, iface: 'playbook' | 'helpdesk'): Scope => `${AREA[iface]}:${method.toUpperCase() === 'GET' ? 'read' : 'write'}`;

/** Every scope of `wanted` that `held` lacks (undefined `held`: a credential with every scope), in SCOPES order. */
export function missingScopes(held: readonly Scope[] | undefined, wanted: readonly Scope[]): Scope[] {
  if (!held) return [];
  return SCOPES.filter((s) => wanted.includes(s) && !held.includes(s));
}

/** Scopes as the authorizer's context carries them (context values are strings): space-separated, in SCOPES order. */
export const encodeScopes = (scopes: readonly Scope[]): string => SCOPES.filter((s) => scopes.includes(s)).join(' ');

/** The distinct scopes of a list, in SCOPES order. */
export const normalizeScopes = (scopes: readonly Scope[]): Scope[] => SCOPES.filter((s) => scopes.includes(s));
