import { describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { openApiDocument } from '#app/openapi/document.ts';
import { errorStatuses, interfaceOf, takesIdempotencyKey } from '#shared/http/contract.ts';

describe('OpenAPI document', () => {
  const doc = openApiDocument();

  it('documents every route of the route table with its schemas', () => {
    for (const route of allRoutes()) {
      const op = (doc.paths[route.path] as Record<string, any>)?.[route.method.toLowerCase()];
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op.operationId).toBe(route.operationId);
      expect(op.responses[route.success.status]).toBeDefined();
      if (route.success.schema) expect(op.responses[route.success.status].content['application/json'].schema).toBeDefined();
      if (route.body) expect(op.requestBody.content['application/json'].schema).toBeDefined();
      for (const name of Object.keys(route.query?.shape ?? {})) expect(op.parameters.map((p: { name: string }) => p.name)).toContain(name);
    }
  });

  const statusesOf = (method: string, path: string) =>
    Object.keys((doc.paths[path] as Record<string, { responses: Record<string, unknown> }>)[method.toLowerCase()].responses)
      .map(Number)
      .sort((a, b) => a - b);

  it('lists for every route its success and every status errorStatuses says it can answer, and nothing else', () => {
    for (const route of allRoutes()) {
      expect(statusesOf(route.method, route.path), `${route.method} ${route.path}`).toEqual([route.success.status, ...errorStatuses(route)].sort((a, b) => a - b));
    }
  });

  it('lists what the middleware answers any route of its shape (the route table held against the document)', () => {
    const keyRoutes = allRoutes().filter((r) => r.auth !== 'session');
    const idempotent = allRoutes().filter(takesIdempotencyKey);
    expect(keyRoutes.length).toBeGreaterThan(50);
    expect(idempotent.map((r) => r.operationId)).toEqual(expect.arrayContaining(['createTicket', 'createApiKey']));
    for (const route of allRoutes()) {
      const listed = statusesOf(route.method, route.path);
      const at = `${route.method} ${route.path}`;
      // Body size, rate limit (or stage throttle), bugs and a busy store (or authorizer) can meet any request; credentials any but a public one.
      expect(listed, at).toEqual(expect.arrayContaining([413, 429, 500, 503]));
      if (!route.public) expect(listed, at).toContain(401);
      // An API key may lack the route's scope (decisions §18); a role may be too low.
      if (!route.public && (route.auth !== 'session' || route.access)) expect(listed, at).toContain(403);
      // An id that cannot exist is not found.
      if (route.params) expect(listed, at).toContain(404);
      // A bad query, malformed JSON, a body that is no object; invalid values (400 in user management, 422 in the desk).
      if (route.query || route.body) expect(listed, at).toContain(400);
      if (route.body && interfaceOf(route.path) === 'helpdesk') expect(listed, at).toContain(422);
      // An Idempotency-Key still held by its first request is 409; reused with another body, invalid values.
      if (takesIdempotencyKey(route)) expect(listed, at).toEqual(expect.arrayContaining([400, 409, interfaceOf(route.path) === 'playbook' ? 400 : 422]));
      for (const s of route.errors ?? []) expect(listed, at).toContain(s);
    }
  });

  it('resolves every $ref to a component', () => {
    const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const name = ref.slice(ref.lastIndexOf('/') + 1, -1);
      expect(doc.components.schemas, name).toHaveProperty(name);
    }
  });

  it('is OpenAPI 3.1 with both credentials described', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['apiKey', 'sessionToken']);
  });
});
