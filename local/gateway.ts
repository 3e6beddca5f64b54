import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { API_GROUPS, AUTHORIZER, NOT_FOUND, type LoadHandler } from '#functions/registry.ts';
import { interfaceOf, type RouteContract } from '#shared/http/contract.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { PayloadTooLargeError } from '#shared/domain/errors.ts';
import { logger } from '#shared/logger.ts';

/** API Gateway's own payload ceiling; the functions enforce the 1 MiB contract limit themselves. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

interface CompiledRoute {
  route: RouteContract;
  load: LoadHandler;
  segments: string[];
  literals: number;
}

export interface GatewayExtras {
  /** Extra GET pages served without auth (health, OpenAPI, docs). */
  pages?: Record<string, () => { status: number; contentType: string; body: string } | Promise<{ status: number; contentType: string; body: string }>>;
  /** Cache authorizer answers per Authorization header, as a stage with authorizerCacheTtlSeconds does (default 0: off). */
  authorizerCacheTtlSeconds?: number;
}

/**
 * A handler module loaded once, as a warm Lambda container keeps it: an
 * `import()` of a loaded module still goes through the ESM loader, which
 * showed as ~3% of the gateway's CPU when done on every request.
 */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () =>
    (loaded ??= load().catch((err) => {
      loaded = undefined;
      throw err;
    }));
}

function compile(): CompiledRoute[] {
  return API_GROUPS.flatMap((g) => {
    const load = once(g.load);
    return g.routes.map((route) => {
      const segments = route.path.split('/').filter(Boolean);
      return { route, load, segments, literals: segments.filter((s) => !s.startsWith('{')).length };
    });
  });
}

const loadAuthorizer = once(AUTHORIZER.load);
const loadNotFound = once(NOT_FOUND.load);

/** Match a path against resource templates; literal segments beat parameters, as in API Gateway. */
function match(routes: CompiledRoute[], method: string, path: string) {
  const parts = path.split('/').filter(Boolean);
  let best: { r: CompiledRoute; params: Record<string, string> } | undefined;
  for (const r of routes) {
    if (r.route.method !== method || r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < parts.length && ok; i++) {
      const seg = r.segments[i];
      if (seg.startsWith('{')) {
        try {
          params[seg.slice(1, -1)] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      } else ok = seg === parts[i];
    }
    if (ok && (!best || r.literals > best.r.literals)) best = { r, params };
  }
  return best;
}

const lambdaContext = (functionName: string) => ({
  awsRequestId: randomUUID(),
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
  memoryLimitInMB: '1024',
  logGroupName: `/aws/lambda/${functionName}`,
  logStreamName: 'local',
  callbackWaitsForEmptyEventLoop: true,
  getRemainingTimeInMillis: () => 29_000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > GATEWAY_MAX_BODY) {
        reject(new PayloadTooLargeError());
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, result: APIGatewayProxyResult) {
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>) });
  res.end(result.body);
}

/**
 * A local stand-in for API Gateway REST: it matches the same route table,
 * runs the same REQUEST authorizer and invokes the same group handlers with
 * proxy events shaped like API Gateway's.
 */
export async function startGateway(port: number, extras: GatewayExtras = {}): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const routes = compile();
  const cacheMs = (extras.authorizerCacheTtlSeconds ?? 0) * 1000;
  const authCache = new Map<string, { until: number; auth: Awaited<ReturnType<Awaited<ReturnType<typeof AUTHORIZER.load>>['handler']>> }>();
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://local');
    const method = (req.method ?? 'GET').toUpperCase();
    const path = url.pathname;
    try {
      const page = method === 'GET' ? extras.pages?.[path] : undefined;
      if (page) {
        const p = await page();
        res.writeHead(p.status, { 'Content-Type': p.contentType });
        return res.end(p.body);
      }
      let body: Buffer;
      try {
        body = await readBody(req);
      } catch (err) {
        const mapped = toHttpError(err, interfaceOf(path));
        return send(res, { statusCode: mapped.status, headers: { 'Content-Type': 'application/json', Connection: 'close' }, body: JSON.stringify(mapped.body) });
      }
      const headers: Record<string, string> = {};
      const multiValueHeaders: Record<string, string[]> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const [k, v] = [req.rawHeaders[i], req.rawHeaders[i + 1]];
        headers[k] = v;
        (multiValueHeaders[k] ??= []).push(v);
      }
      const query: Record<string, string> = {};
      const multiQuery: Record<string, string[]> = {};
      for (const [k, v] of url.searchParams) {
        query[k] = v;
        (multiQuery[k] ??= []).push(v);
      }
      const found = match(routes, method, path);
      const requestContext = {
        accountId: '000000000000',
        apiId: 'local',
        stage: 'local',
        requestId: randomUUID(),
        httpMethod: method,
        path,
        resourcePath: found?.r.route.path ?? '/{proxy+}',
        identity: { sourceIp: req.socket.remoteAddress ?? '127.0.0.1' },
        requestTimeEpoch: Date.now(),
      } as unknown as APIGatewayProxyEvent['requestContext'];
      const event: APIGatewayProxyEvent = {
        resource: found?.r.route.path ?? '/{proxy+}',
        path,
        httpMethod: method,
        headers,
        multiValueHeaders,
        queryStringParameters: Object.keys(query).length ? query : null,
        multiValueQueryStringParameters: Object.keys(multiQuery).length ? multiQuery : null,
        pathParameters: found && Object.keys(found.params).length ? found.params : null,
        stageVariables: null,
        body: body.length ? body.toString('utf8') : null,
        isBase64Encoded: false,
        requestContext,
      };
      if (!found) {
        const { handler } = await loadNotFound();
        return send(res, await handler(event));
      }
      const authorizerEvent = {
        type: 'REQUEST',
        methodArn: `arn:aws:execute-api:local:000000000000:local/local/${method}${path}`,
        resource: event.resource,
        path,
        httpMethod: method,
        headers,
        multiValueHeaders,
        queryStringParameters: event.queryStringParameters,
        multiValueQueryStringParameters: event.multiValueQueryStringParameters,
        pathParameters: event.pathParameters,
        stageVariables: null,
        requestContext,
      } as unknown as APIGatewayRequestAuthorizerEvent;
      const { handler: authorize } = await loadAuthorizer();
      const identity = req.headers.authorization;
      const cached = cacheMs && identity ? authCache.get(identity) : undefined;
      const auth = cached && cached.until > Date.now() ? cached.auth : await authorize(authorizerEvent);
      if (cacheMs && identity && auth !== cached?.auth) authCache.set(identity, { until: Date.now() + cacheMs, auth });
      event.requestContext.authorizer = { ...auth.context, principalId: auth.principalId };
      const { handler } = await found.r.load();
      send(res, await handler(event, lambdaContext(found.r.route.group)));
    } catch (err) {
      // A gateway-level failure is a bug in the stack, never the caller's fault: log it loudly.
      logger.error('local gateway failure', { err, method, path });
      const mapped = toHttpError(err, interfaceOf(path));
      send(res, { statusCode: mapped.status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(mapped.body) });
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // All interfaces (dual-stack), so both localhost and 127.0.0.1 reach it.
    server.listen(port, () => resolve());
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    url: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
