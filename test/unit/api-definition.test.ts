import { describe, expect, it } from 'vitest';
import * as z from '#shared/zod.ts';
import { API_GROUPS, API_PREFIXES } from '#app/registry.ts';
import { openApiDocument } from '#app/openapi/document.ts';
import { ServiceUnavailableError, UnauthorizedError } from '#shared/domain/errors.ts';
import { MISSING_CREDENTIALS_MESSAGE, type RouteContract } from '#shared/http/contract.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { apiDefinition } from '../../infra/api-definition.ts';

const definition = (authorizerCacheTtlSeconds: number, document = openApiDocument()) =>
  apiDefinition({ document, groups: API_GROUPS, prefixes: API_PREFIXES, uri: (target) => `uri:${target}`, authorizerCacheTtlSeconds }) as Record<string, any>;

/** The body of a gateway response template in one interface's branch (`#if(... '/playbook') A #else B #end`). */
const branch = (template: string, iface: 'playbook' | 'helpdesk') => {
  const lines = template.split('\n');
  expect(lines[0]).toContain("startsWith('/playbook')");
  return JSON.parse(iface === 'playbook' ? lines[1] : lines[3]);
};

describe('API Gateway definition (infra/api-definition.ts)', () => {
  it('caches the authorizer per Authorization header with a TTL, and answers a missing header itself; without a TTL, neither', () => {
    const cached = definition(300);
    expect(cached.components.securitySchemes.authorizer['x-amazon-apigateway-authorizer']).toEqual({
      type: 'request',
      authorizerUri: 'uri:authorizer',
      authorizerResultTtlInSeconds: 300,
      identitySource: 'method.request.header.Authorization',
    });
    expect(cached['x-amazon-apigateway-gateway-responses'].UNAUTHORIZED.statusCode).toBe('401');
    const uncached = definition(0);
    expect(uncached.components.securitySchemes.authorizer['x-amazon-apigateway-authorizer']).not.toHaveProperty('identitySource');
    expect(uncached['x-amazon-apigateway-gateway-responses']).not.toHaveProperty('UNAUTHORIZED');
  });

  it("answers in each interface's envelope, as the functions and the local gateway do", () => {
    const responses = definition(300)['x-amazon-apigateway-gateway-responses'];
    for (const iface of ['playbook', 'helpdesk'] as const) {
      const unavailable = toHttpError(new ServiceUnavailableError('The service is temporarily overloaded; retry shortly'), iface);
      expect(branch(responses.AUTHORIZER_FAILURE.responseTemplates['application/json'], iface)).toEqual(unavailable.body);
      expect(responses.AUTHORIZER_FAILURE).toMatchObject({ statusCode: String(unavailable.status), responseParameters: { 'gatewayresponse.header.Retry-After': "'1'" } });
      const unauthorized = toHttpError(new UnauthorizedError(MISSING_CREDENTIALS_MESSAGE), iface);
      expect(branch(responses.UNAUTHORIZED.responseTemplates['application/json'], iface)).toEqual(unauthorized.body);
      expect(responses.UNAUTHORIZED.statusCode).toBe(String(unauthorized.status));
    }
  });

  it('routes each operation to its group, behind the authorizer and the API key unless public; refuses an operation of no group', () => {
    const body = definition(300);
    const route = API_GROUPS[1].routes[0];
    expect(body.paths[route.path][route.method.toLowerCase()]).toMatchObject({
      security: [{ authorizer: [] }, { api_key: [] }],
      'x-amazon-apigateway-integration': { type: 'aws_proxy', httpMethod: 'POST', uri: `uri:${API_GROUPS[1].name}` },
    });
    for (const prefix of API_PREFIXES) expect(body.paths[`${prefix}/{proxy+}`]['x-amazon-apigateway-any-method']['x-amazon-apigateway-integration'].uri).toBe('uri:notFound');
    const stray: RouteContract = {
      operationId: 'stray',
      method: 'GET',
      path: '/helpdesk/api/v1/stray/{id}',
      group: 'tickets',
      summary: 'Stray',
      params: z.object({ id: z.string() }),
      success: { status: 200, description: 'OK' },
    };
    expect(() => definition(300, openApiDocument({ routes: [stray] }))).toThrow(/GET \/helpdesk\/api\/v1\/stray\/\{id\} is in the OpenAPI document but in no group/);
  });
});
