import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEvent, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';

/** One request as API Gateway REST sees it, before it builds the proxy event. */
export interface ApiRequest {
  method: string;
  path: string;
  /** The matched method's resource template (`/helpdesk/api/v1/tickets/{id}`); the catch-all's when none matched. */
  resource: string;
  /** The template's parameters, decoded; empty when it has none. */
  params: Record<string, string>;
  /** Raw header pairs in order (`IncomingMessage.rawHeaders`): name, value, name, value... */
  rawHeaders: string[];
  searchParams: URLSearchParams;
  body: Buffer;
  sourceIp: string;
}

/** The API's identity in the request context. */
export interface ApiStage {
  restApiId: string;
  stageName: string;
}

/**
 * The aws_proxy integration's event for a request, shaped as API Gateway REST
 * shapes it (the local gateway, local/gateway.ts, and the bench's first
 * requests, bench/first-request.ts, build theirs here). The authorizer's
 * answer goes in `requestContext.authorizer` (authorize).
 */
export function proxyEvent(stage: ApiStage, r: ApiRequest): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < r.rawHeaders.length; i += 2) {
    const [k, v] = [r.rawHeaders[i], r.rawHeaders[i + 1]];
    headers[k] = v;
    (multiValueHeaders[k] ??= []).push(v);
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of r.searchParams) {
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const requestContext = {
    accountId: '000000000000',
    apiId: stage.restApiId,
    stage: stage.stageName,
    requestId: randomUUID(),
    httpMethod: r.method,
    path: r.path,
    resourcePath: r.resource,
    identity: { sourceIp: r.sourceIp },
    requestTimeEpoch: Date.now(),
  } as unknown as APIGatewayProxyEvent['requestContext'];
  return {
    resource: r.resource,
    path: r.path,
    httpMethod: r.method,
    headers,
    multiValueHeaders,
    queryStringParameters: Object.keys(query).length ? query : null,
    multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
    pathParameters: Object.keys(r.params).length ? r.params : null,
    stageVariables: null,
    body: r.body.length ? r.body.toString('utf8') : null,
    isBase64Encoded: false,
    requestContext,
  };
}

/** The REQUEST authorizer's event for a proxy event's request. */
export const authorizerEvent = (event: APIGatewayProxyEvent): APIGatewayRequestAuthorizerEvent =>
  ({
    type: 'REQUEST',
    methodArn: `arn:aws:execute-api:local:000000000000:local/local/${event.httpMethod}${event.path}`,
    resource: event.resource,
    path: event.path,
    httpMethod: event.httpMethod,
    headers: event.headers,
    multiValueHeaders: event.multiValueHeaders,
    queryStringParameters: event.queryStringParameters,
    multiValueQueryStringParameters: event.multiValueQueryStringParameters,
    pathParameters: event.pathParameters,
    stageVariables: null,
    requestContext: event.requestContext,
  }) as unknown as APIGatewayRequestAuthorizerEvent;

/** The REQUEST authorizer's answer, as the gateway uses it. */
export interface AuthorizerResult {
  principalId: string;
  context?: Record<string, string | number | boolean>;
}

/** What API Gateway passes the integration of the authorizer's answer: its context and principal. */
export function authorize(event: APIGatewayProxyEvent, auth: AuthorizerResult): void {
  event.requestContext.authorizer = { ...auth.context, principalId: auth.principalId };
}
