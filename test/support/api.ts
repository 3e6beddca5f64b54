import { afterAll, beforeAll, expect } from 'vitest';
import type { Plan } from '#shared/auth/principal.ts';
import type { GatewayExtras } from '../../local/gateway.ts';
import { recordAnswer, undocumentedAnswers } from './documented.ts';
import { localLambda } from './lambda.ts';
import { authorizerCacheEnv } from '../../local/lambda/index.ts';
import { forgetReadSettings } from '#shared/config/settings.ts';

export interface Response<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Client {
  request<T = any>(method: string, path: string, opts?: { token?: string | null; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> }): Promise<Response<T>>;
}

/**
 * Start the local gateway for this test file (on a free port, in front of the
 * deployed functions run from their bundles: test/support/lambda.ts) and give
 * a fetch-based client. The authorizer's answers are cached as the deployed
 * stage caches them (the template's TTL) unless `extras` says otherwise, and
 * this process's own changes of credentials (the services a test calls
 * directly) flush that cache as the functions' do.
 */
export function useGateway(extras: GatewayExtras = {}): { url: () => string; client: Client } {
  let url = '';
  let close: (() => Promise<void>) | undefined;
  const lambda = localLambda();
  beforeAll(async () => {
    const { startGateway } = await import('../../local/gateway.ts');
    const fns = await lambda;
    const ttl = extras.authorizerCacheTtlSeconds ?? fns.apiGateway.authorizerCacheTtlSeconds;
    if (ttl) {
      Object.assign(process.env, { AWS_ENDPOINT_URL_API_GATEWAY: fns.apiGateway.endpoint, ...authorizerCacheEnv({ ...fns.apiGateway, authorizerCacheTtlSeconds: ttl }) });
      forgetReadSettings();
    }
    const gw = await startGateway(0, fns, { ...extras, authorizerCacheTtlSeconds: ttl });
    url = gw.url;
    close = gw.close;
  });
  afterAll(async () => close?.());
  // Every answer this file drew is one its operation lists (a Prism proxy's check, in process).
  afterAll(() => expect(undocumentedAnswers(), 'answers the OpenAPI document does not list').toEqual([]));
  return {
    url: () => url,
    client: {
      async request(method, path, opts = {}) {
        const headers: Record<string, string> = { ...(opts.headers ?? {}) };
        if (opts.token) headers.Authorization = `Bearer ${opts.token}`;
        let body: string | Buffer | undefined;
        if (opts.rawBody !== undefined) body = opts.rawBody;
        else if (opts.body !== undefined) body = JSON.stringify(opts.body);
        if (body !== undefined) headers['Content-Type'] ??= 'application/json';
        const res = await fetch(url + path, { method, headers, body });
        recordAnswer(method, path, res.status);
        const text = await res.text();
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = text;
        }
        return { status: res.status, headers: res.headers, body: parsed as any, text };
      },
    },
  };
}

export interface TestAccount {
  accountId: string;
  ownerId: string;
  ownerKey: string;
  /** Create a user with a role and status active, and return its id and API key. */
  addUser(role: 'admin' | 'member' | 'viewer', email?: string): Promise<{ id: string; key: string }>;
  session(userId: string, ttl?: number): Promise<string>;
  /** Change a user as the owner does with PATCH /users/{id}, through the users service: for a test about something else (no users function to start). */
  updateUser(userId: string, changes: { role?: 'admin' | 'member' | 'viewer'; status?: 'active' | 'suspended' }): Promise<void>;
}

let seq = 0;
export const uniqueEmail = (tag = 'user') => `${tag}.${process.pid}.${Date.now()}.${seq++}@example.com`;

/** Provision a fresh tenant through the same service the admin CLI uses. */
export async function createTestAccount(plan: Plan = 'enterprise'): Promise<TestAccount> {
  const accounts = await import('#shared/accounts/service.ts');
  const users = await import('#shared/users/service.ts');
  const created = await accounts.createAccount({ name: 'Test Co', plan, ownerEmail: uniqueEmail('owner'), ownerName: 'Olive Owner' });
  const ownerPrincipal = { accountId: created.accountId, userId: created.owner.id, role: 'owner' as const, plan, credential: 'api_key' as const };
  return {
    accountId: created.accountId,
    ownerId: created.owner.id,
    ownerKey: created.apiKey,
    async addUser(role, email = uniqueEmail(role)) {
      const u = await users.createUser(ownerPrincipal, { email, name: `${role} person`, role, send_invitation: false });
      await accounts.issueSessionToken(created.accountId, u.id); // first login activates the user
      const { apiKey } = await accounts.createApiKey(created.accountId, u.id, 'test');
      return { id: u.id, key: apiKey };
    },
    async session(userId, ttl) {
      return (await accounts.issueSessionToken(created.accountId, userId, ttl)).token;
    },
    async updateUser(userId, changes) {
      await users.updateUser(ownerPrincipal, userId, changes);
    },
  };
}
