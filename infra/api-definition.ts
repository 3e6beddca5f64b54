import type { ApiGroup } from '#app/registry.ts';
import { MISSING_CREDENTIALS_MESSAGE, routeKey, type RouteContract } from '#shared/http/contract.ts';

/**
 * The API Gateway definition of the REST API (the RestApi's Body): the OpenAPI document the route table generates
 * (app/openapi/document.ts, served at /openapi.json), projected onto what API Gateway imports, with its extensions.
 *
 * - The same paths, methods, operation ids, summaries, tags, parameters and response statuses as the document.
 * - OpenAPI 3.0.1, not 3.1: API Gateway refuses a 3.1 document ("Invalid OpenAPI input"). So schemas stay out (JSON
 *   Schema 2020-12, which API Gateway's draft-4 models cannot hold; every request is validated by its zod contract in
 *   the function), and so do the event `webhooks` (3.1 only; they are not routes).
 * - Each operation: `x-amazon-apigateway-integration` (aws_proxy to its group's function), and `security` with the
 *   REQUEST authorizer and the API key (usage plans meter it; the key comes from the authorizer), or none for a public
 *   route (RouteContract.public) and for /health (a MOCK integration answering `{"status":"ok"}`).
 * - `{proxy+}` ANY under each interface's prefix, with no security, to the 404 function.
 * - The authorizer (`x-amazon-apigateway-authorizer`), the API key source, and the gateway responses.
 *
 * A function's invoke URI names it by a stage variable (`${stageVariables.fn_<name>}`, set on the stage to the
 * function's name), not by its ARN: the functions that flush the authorizer cache hold the RestApi's id, so a body
 * that referred to their ARNs would make a dependency cycle (RestApi -> function -> RestApi). The local gateway reads
 * this definition out of the template (local/lambda/deployment.ts), so `npm start` routes as API Gateway does.
 */

type Json = Record<string, unknown>;
type Document = { info: Json; paths: Record<string, Record<string, unknown>> };

/** The security schemes of the definition: API Gateway's names for the authorizer and the usage-plan key. */
export const AUTHORIZER_SCHEME = 'authorizer';
export const API_KEY_SCHEME = 'api_key';
/** The 404 function's name among the integration targets (group names name the groups' functions). */
export const NOT_FOUND_TARGET = 'notFound';
/** The stage variable that names a target's function. */
export const stageVariableOf = (target: string) => `fn_${target}`;

/** API Gateway's invoke URI of the function (of this partition, region and account) that a stage variable names. */
export const invokeUri = (at: { partition: string; region: string; account: string }, variable: string) =>
  `arn:${at.partition}:apigateway:${at.region}:lambda:path/2015-03-31/functions/arn:${at.partition}:lambda:${at.region}:${at.account}:function:\${stageVariables.${variable}}/invocations`;

export interface DefinitionOptions {
  /** The document (openApiDocument({ routes })) of these groups' routes. */
  document: Document;
  groups: readonly ApiGroup[];
  /** Unknown paths under each prefix answer 404 from the 404 function. */
  prefixes: readonly string[];
  /** The invoke URI of a target's function (a group's name, NOT_FOUND_TARGET or 'authorizer'). */
  uri: (target: string) => string;
  authorizerCacheTtlSeconds: number;
}

/** A JSON 404/401/503 in the envelope of the path's interface, as the functions answer (a gateway response knows the resource path). */
const byInterface = (playbook: string, helpdesk: string) => ["#if($context.resourcePath.startsWith('/playbook'))", playbook, '#else', helpdesk, '#end'].join('\n');

/** API Gateway's own answers (no route, throttled, authorizer down, no credentials) in the envelopes the functions use. */
export function gatewayResponses(authorizerCacheTtlSeconds: number): Json {
  const json = (template: string) => ({ 'application/json': template });
  return {
    MISSING_AUTHENTICATION_TOKEN: { statusCode: '404', responseTemplates: json('{"error":{"code":"resource_not_found","message":"No such route"}}') },
    THROTTLED: { statusCode: '429', responseTemplates: json('{"error":{"code":"rate_limit_exceeded","message":"Too many requests"}}') },
    DEFAULT_4XX: { responseTemplates: json('{"error":{"code":"bad_request","message":$context.error.messageString}}') },
    // With the cache on, the authorizer fails (nothing cached) when the store is throttled: answer that as a retryable 503.
    AUTHORIZER_FAILURE: {
      statusCode: '503',
      responseParameters: { 'gatewayresponse.header.Retry-After': "'1'" },
      responseTemplates: json(
        byInterface(
          '{"error":{"code":"service_unavailable","message":"The service is temporarily overloaded; retry shortly"}}',
          '{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"The service is temporarily overloaded; retry shortly"}}',
        ),
      ),
    },
    // With the cache, the Authorization header is the identity source: API Gateway answers a request without it
    // itself, before the authorizer, in the envelope of the path's interface, as the functions answer a 401 (local/gateway.ts).
    ...(authorizerCacheTtlSeconds > 0
      ? {
          UNAUTHORIZED: {
            statusCode: '401',
            responseTemplates: json(
              byInterface(
                `{"error":{"code":"unauthorized","message":"${MISSING_CREDENTIALS_MESSAGE}"}}`,
                `{"success":false,"error":{"code":"UNAUTHORIZED","message":"${MISSING_CREDENTIALS_MESSAGE}"}}`,
              ),
            ),
          },
        }
      : {}),
    DEFAULT_5XX: { responseTemplates: json('{"error":{"code":"internal_error","message":"Internal error"}}') },
  };
}

const proxyIntegration = (uri: string) => ({ type: 'aws_proxy', httpMethod: 'POST', uri, passthroughBehavior: 'when_no_match' });

/** /health: answered by API Gateway itself (no function, no credentials), as the local gateway answers it. */
const HEALTH_INTEGRATION = {
  type: 'mock',
  passthroughBehavior: 'when_no_match',
  requestTemplates: { 'application/json': '{"statusCode": 200}' },
  responses: { default: { statusCode: '200', responseTemplates: { 'application/json': '{"status":"ok"}' } } },
};

/** An operation of the document as API Gateway imports it: no schemas, the parameters by name, the statuses by description. */
function gatewayOperation(op: Json, security: unknown[], integration: Json): Json {
  const parameters = (op.parameters as Json[] | undefined) ?? [];
  const responses = (op.responses ?? {}) as Record<string, Json>;
  return {
    operationId: op.operationId,
    summary: op.summary,
    tags: op.tags,
    ...(parameters.length ? { parameters: parameters.map((p) => ({ name: p.name, in: p.in, required: p.required === true, schema: { type: 'string' } })) } : {}),
    responses: Object.fromEntries(Object.entries(responses).map(([status, r]) => [status, { description: r.description }])),
    security,
    'x-amazon-apigateway-integration': integration,
  };
}

/** The RestApi's Body. */
export function apiDefinition(options: DefinitionOptions): Json {
  const { document, groups, prefixes, uri, authorizerCacheTtlSeconds } = options;
  const routes = new Map<string, { route: RouteContract; group: ApiGroup }>();
  for (const group of groups) for (const route of group.routes) routes.set(routeKey(route.method, route.path), { route, group });
  // API Gateway applies every scheme an operation names, one requirement object each: the authorizer, and the API key
  // (the method's apiKeyRequired, so the usage plans meter it).
  const authorized = [{ [AUTHORIZER_SCHEME]: [] }, { [API_KEY_SCHEME]: [] }];
  const paths: Record<string, Json> = {};
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const found = routes.get(routeKey(method, path));
      let operation: Json;
      if (found) operation = gatewayOperation(op as Json, found.route.public ? [] : authorized, proxyIntegration(uri(found.group.name)));
      else if (path === '/health' && method === 'get') operation = gatewayOperation(op as Json, [], HEALTH_INTEGRATION);
      else throw new Error(`${method.toUpperCase()} ${path} is in the OpenAPI document but in no group of the route table`);
      (paths[path] ??= {})[method] = operation;
    }
  }
  for (const prefix of prefixes) {
    paths[`${prefix}/{proxy+}`] = {
      'x-amazon-apigateway-any-method': {
        summary: 'Unknown paths of the interface: a JSON 404 in its envelope',
        parameters: [{ name: 'proxy', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 404: { description: 'No such route' } },
        security: [],
        'x-amazon-apigateway-integration': proxyIntegration(uri(NOT_FOUND_TARGET)),
      },
    };
  }
  return {
    openapi: '3.0.1',
    info: { title: document.info.title, version: document.info.version, description: document.info.description },
    paths,
    components: {
      securitySchemes: {
        [AUTHORIZER_SCHEME]: {
          type: 'apiKey',
          name: 'Authorization',
          in: 'header',
          'x-amazon-apigateway-authtype': 'custom',
          'x-amazon-apigateway-authorizer': {
            type: 'request',
            authorizerUri: uri('authorizer'),
            authorizerResultTtlInSeconds: authorizerCacheTtlSeconds,
            // With the cache, the Authorization header is the cache key (and API Gateway answers 401 without it). Without,
            // no identity source: API Gateway calls the authorizer even when the header is missing, so the 401 comes from
            // our function in the envelope of the path's interface.
            ...(authorizerCacheTtlSeconds > 0 ? { identitySource: 'method.request.header.Authorization' } : {}),
          },
        },
        // Clients never send it: the authorizer names the usage-plan key (x-amazon-apigateway-api-key-source AUTHORIZER).
        [API_KEY_SCHEME]: { type: 'apiKey', name: 'x-api-key', in: 'header' },
      },
    },
    'x-amazon-apigateway-api-key-source': 'AUTHORIZER',
    // The raw mail of a message (GET /helpdesk/api/messages/{id}/raw, decisions §24) leaves as the bytes received.
    'x-amazon-apigateway-binary-media-types': ['message/rfc822'],
    'x-amazon-apigateway-gateway-responses': gatewayResponses(authorizerCacheTtlSeconds),
  };
}
