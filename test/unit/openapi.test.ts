import { describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { openApiDocument } from '#app/openapi/document.ts';

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
