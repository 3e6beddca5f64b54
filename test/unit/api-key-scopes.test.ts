import { describe, expect, it } from 'vitest';
import { CreateApiKeyBodySchema, oneYearAhead } from '#shared/accounts/model.ts';
import { hourStart, useDue } from '#shared/auth/api-keys.ts';
import { keyExpired, principalContext, PrincipalSchema, type Principal } from '#shared/auth/principal.ts';
import { missingScopes, scopeNeeded, type Scope } from '#shared/auth/scopes.ts';

const key: Principal = { accountId: 'acct_1', userId: 'usr_1', role: 'member', plan: 'paid', credential: 'api_key' };

describe('the scope a request needs (decisions §18)', () => {
  it.each([
    ['GET', 'playbook', 'users:read'],
    ['POST', 'playbook', 'users:write'],
    ['PATCH', 'playbook', 'users:write'],
    ['DELETE', 'playbook', 'users:write'],
    ['GET', 'helpdesk', 'desk:read'],
    ['PUT', 'helpdesk', 'desk:write'],
    ['post', 'helpdesk', 'desk:write'],
  ] as const)('%s under /%s needs %s', (method, iface, scope) => {
    expect(scopeNeeded(method, iface)).toBe(scope);
  });

  it.each<[string, Scope[] | undefined, Scope[], Scope[]]>([
    ['a session token (no scopes) lacks nothing', undefined, ['desk:write', 'users:write'], []],
    ['a desk:read key lacks desk:write', ['desk:read'], ['desk:write'], ['desk:write']],
    ['read does not imply write, nor write read', ['users:write'], ['users:read', 'users:write'], ['users:read']],
    ['the missing ones come in a fixed order', ['users:read'], ['desk:write', 'desk:read', 'users:read'], ['desk:read', 'desk:write']],
  ])('%s', (_name, held, wanted, missing) => {
    expect(missingScopes(held, wanted)).toEqual(missing);
  });
});

describe("the authorizer's answer carries the scopes and the expiry as strings", () => {
  it('round-trips through the context', () => {
    // Arrange
    const principal: Principal = { ...key, scopes: ['desk:write', 'desk:read'], keyExpiresAt: '2030-01-01T00:00:00.000Z' };
    // Act
    const context = principalContext(principal);
    // Assert
    expect(Object.values(context).every((v) => typeof v === 'string')).toBe(true);
    expect(context.scopes).toBe('desk:read desk:write');
    expect(PrincipalSchema.parse({ ...context, principalId: 'usr_1' })).toEqual({ ...principal, scopes: ['desk:read', 'desk:write'] });
  });

  it('leaves both out for a session token, which has every scope and no key expiry', () => {
    const context = principalContext({ ...key, credential: 'session' });
    expect(context).not.toHaveProperty('scopes');
    expect(context).not.toHaveProperty('keyExpiresAt');
    expect(PrincipalSchema.parse(context).scopes).toBeUndefined();
  });

  it('refuses a context with an unknown or empty scope', () => {
    for (const scopes of ['desk:read admin', '', 'desk:read  desk:write']) expect(PrincipalSchema.safeParse({ ...principalContext(key), scopes }).success).toBe(false);
  });

  it('says a key has expired from its expiry on', () => {
    const at = Date.parse('2030-01-01T00:00:00.000Z');
    const p = { keyExpiresAt: '2030-01-01T00:00:00.000Z' };
    expect(keyExpired(p, at - 1)).toBe(false);
    expect(keyExpired(p, at)).toBe(true);
    expect(keyExpired({}, at)).toBe(false);
  });
});

describe('last_used_at is written once an hour', () => {
  const now = Date.parse('2030-05-06T10:42:10.500Z');
  it.each([
    ['never used', null, true],
    ['used in an earlier hour', '2030-05-06T09:59:59.999Z', true],
    ['used at the start of this hour', '2030-05-06T10:00:00.000Z', false],
    ['used earlier in this hour', '2030-05-06T10:41:00.000Z', false],
  ])('%s: due %s', (_name, lastUsedAt, due) => {
    expect(useDue(lastUsedAt, now)).toBe(due);
  });

  it('counts hours in UTC', () => {
    expect(hourStart(now)).toBe('2030-05-06T10:00:00.000Z');
  });
});

describe('the create body', () => {
  const inOneDay = () => new Date(Date.now() + 86_400_000).toISOString();
  const fieldOf = (body: unknown) => {
    const r = CreateApiKeyBodySchema.safeParse(body);
    return r.success ? null : r.error.issues[0].path.join('.');
  };

  it('takes a name alone (every scope, no expiry, the caller)', () => {
    expect(CreateApiKeyBodySchema.parse({ name: 'sync' })).toEqual({ name: 'sync' });
  });

  it('normalizes an expiry with an offset to UTC', () => {
    const at = new Date(Date.now() + 86_400_000);
    at.setUTCMilliseconds(0);
    const withOffset = `${at.toISOString().slice(0, 19)}+00:00`;
    expect(CreateApiKeyBodySchema.parse({ name: 'sync', expires_at: withOffset }).expires_at).toBe(at.toISOString());
  });

  it.each([
    ['no scope', { scopes: [] }, 'scopes'],
    ['an unknown scope', { scopes: ['desk:read', 'admin'] }, 'scopes'],
    ['an expiry in the past', { expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
    ['an expiry over a year ahead', { expires_at: new Date(oneYearAhead() + 60_000).toISOString() }, 'expires_at'],
    ['an expiry without a time zone', { expires_at: inOneDay().slice(0, 19) }, 'expires_at'],
    ['an empty name', { name: ' ' }, 'name'],
  ])('refuses %s, naming the field', (_name, change, field) => {
    expect(fieldOf({ name: 'sync', ...change })).toBe(field);
  });
});
