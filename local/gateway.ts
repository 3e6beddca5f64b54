import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { interfaceOf } from '#shared/http/contract.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError } from '#shared/domain/errors.ts';
import { MISSING_CREDENTIALS_MESSAGE } from '#shared/http/contract.ts';
import { logger } from '#shared/logger.ts';
import { authorize, authorizerEvent, proxyEvent, type AuthorizerResult } from './api-event.ts';
import type { ApiRoute } from './lambda/deployment.ts';
import type { LocalLambda } from './lambda/index.ts';
import type { LocalFunction } from './lambda/runtime.ts';

/** API Gateway's own payload ceiling; the functions enforce the 1 MiB contract limit themselves. */
const GATEWAY_MAX_BODY = 10 * 1024 * 1024;

interface CompiledRoute {
  route: ApiRoute;
  fn: LocalFunction;
  segments: string[];
  literals: number;
  /** The last segment is `{proxy+}`: it matches the rest of the path. */
  greedy: boolean;
}

export interface GatewayExtras {
  /** Extra GET pages served without auth (health, OpenAPI, docs). */
  pages?: Record<string, () => { status: number; contentType: string; body: string } | Promise<{ status: number; contentType: string; body: string }>>;
  /**
   * Cache authorizer answers per Authorization header, as a stage with authorizerCacheTtlSeconds does: `npm start`
   * passes the template's (LOCAL_STAGE, 300 s); the tests' gateway defaults to 0 (off). Flushed, as API Gateway's is,
   * by FlushStageAuthorizersCache on the local control plane (LocalLambda.apiGateway).
   */
  authorizerCacheTtlSeconds?: number;
}

/** The routes of the template's API definition (the RestApi's body), each bound to its running function. */
function compile(lambda: LocalLambda): CompiledRoute[] {
  return lambda.deployment.api.routes.map((route) => {
    const segments = route.path.split('/').filter(Boolean);
    const greedy = segments.at(-1)?.endsWith('+}') ?? false;
    return { route, fn: lambda.fn(route.functionId), segments, literals: segments.filter((seg) => !seg.startsWith('{')).length, greedy };
  });
}

/** Match a path against resource templates; literal segments beat parameters and a greedy `{proxy+}` comes last, as in API Gateway. */
function match(routes: CompiledRoute[], method: string, path: string) {
  const parts = path.split('/').filter(Boolean);
  let best: { r: CompiledRoute; params: Record<string, string> } | undefined;
  const rank = (r: CompiledRoute) => (r.greedy ? -1 : r.literals);
  for (const r of routes) {
    if (r.route.method !== method && r.route.method !== 'ANY') continue;
    if (r.greedy ? parts.length < r.segments.length : r.segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    for (let i = 0; i < r.segments.length && ok; i++) {
      const seg = r.segments[i];
      if (r.greedy && i === r.segments.length - 1) params[seg.slice(1, -2)] = parts.slice(i).join('/');
      else if (seg.startsWith('{')) {
        try {
          params[seg.slice(1, -1)] = decodeURIComponent(parts[i]);
        } catch {
          ok = false;
        }
      } else ok = seg === parts[i];
    }
    if (ok && (!best || rank(r) > rank(best.r))) best = { r, params };
  }
  return best;
}

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

/** Invoke the function behind a method; a function error is API Gateway's 502, logged loudly (it is a bug). */
async function invokeIntegration(fn: LocalFunction, event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  try {
    return await fn.invoke<APIGatewayProxyResult>(event);
  } catch (err) {
    logger.error('local gateway: integration failed', { function: fn.name, err: (err as Error).message, method: event.httpMethod, path: event.path });
    return INTEGRATION_FAILURE;
  }
}

function send(res: ServerResponse, result: APIGatewayProxyResult) {
  res.writeHead(result.statusCode, { ...(result.headers as Record<string, string>) });
  // A binary answer (the API's binary media types) leaves as its bytes, as API Gateway decodes it.
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

/** API Gateway's answer when the integration fails (a function error or timeout). */
const INTEGRATION_FAILURE: APIGatewayProxyResult = { statusCode: 502, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ message: 'Internal server error' }) };

/** The stack's AUTHORIZER_FAILURE gateway response (infra/api.ts): a retryable 503 in the envelope of the path's interface. */
function authorizerFailure(path: string): APIGatewayProxyResult {
  const mapped = toHttpError(new ServiceUnavailableError('The service is temporarily overloaded; retry shortly'), interfaceOf(path));
  return { statusCode: 503, headers: { 'Content-Type': 'application/json', 'Retry-After': '1' }, body: JSON.stringify(mapped.body) };
}

/**
 * API Gateway's answer, with the cache on, to a request without the identity source (the Authorization header): it
 * never reaches the authorizer. The stack's UNAUTHORIZED gateway response (infra/api.ts): a 401 in the envelope of
 * the path's interface.
 */
function missingCredentials(path: string): APIGatewayProxyResult {
  const mapped = toHttpError(new UnauthorizedError(MISSING_CREDENTIALS_MESSAGE), interfaceOf(path));
  return { statusCode: 401, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(mapped.body) };
}

/** A running local gateway. */
export interface LocalGateway {
  server: Server;
  url: string;
  close(): Promise<void>;
  /** The authorizer answers held in its cache (expired ones too, until the next sweep). */
  cachedAnswers(): number;
}

/**
 * A local stand-in for API Gateway REST: the paths and methods of the
 * synthesized template's API definition (the RestApi's OpenAPI body), its REQUEST
 * authorizer and the functions behind the methods, each run from its bundle in its
 * own worker (local/lambda/), invoked with proxy events shaped like API Gateway's.
 * Paths no method matches go to the catch-all function, as the definition's
 * `{proxy+}` methods do.
 */
export async function startGateway(port: number, lambda: LocalLambda, extras: GatewayExtras = {}): Promise<LocalGateway> {
  // Each method's candidates (its own routes and the ANY ones), so a request is matched against those only.
  const routes = compile(lambda);
  const anyMethod = routes.filter((r) => r.route.method === 'ANY');
  const byMethod = new Map([...new Set(routes.map((r) => r.route.method))].map((m) => [m, routes.filter((r) => r.route.method === m || r.route.method === 'ANY')]));
  const candidates = (method: string) => byMethod.get(method) ?? anyMethod;
  const authorizer = lambda.fn(lambda.deployment.api.authorizerFunctionId);
  const catchAll = routes.find((r) => r.greedy)?.fn;
  if (!catchAll) throw new Error('The template has no {proxy+} catch-all method');
  const cacheMs = (extras.authorizerCacheTtlSeconds ?? 0) * 1000;
  const authCache = new Map<string, { until: number; auth: AuthorizerResult }>();
  // Expired answers go once per TTL: the cache then holds the credentials of one TTL at most, as API Gateway's does,
  // rather than every Authorization header a long-running stack has seen since the last flush (bad ones included).
  let sweptAt = Date.now();
  const remember = (identity: string, auth: AuthorizerResult) => {
    const now = Date.now();
    if (now - sweptAt >= cacheMs) {
      for (const [key, entry] of authCache) if (entry.until <= now) authCache.delete(key);
      sweptAt = now;
    }
    authCache.set(identity, { until: now + cacheMs, auth });
  };
  // An answer being fetched when a flush comes must not be cached: it may predate the change that flushed.
  let generation = 0;
  const unsubscribe = lambda.apiGateway.onAuthorizerCacheFlush(() => {
    generation++;
    authCache.clear();
  });
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
      const found = match(candidates(method), method, path);
      const event = proxyEvent(lambda.apiGateway, {
        method,
        path,
        resource: found?.r.route.path ?? '/{proxy+}',
        params: found?.params ?? {},
        rawHeaders: req.rawHeaders,
        searchParams: url.searchParams,
        body,
        sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
      });
      const target = found ?? { r: { route: { authorized: false }, fn: catchAll } };
      if (!target.r.route.authorized) return send(res, await invokeIntegration(target.r.fn, event));
      const identity = req.headers.authorization;
      if (cacheMs && !identity) return send(res, missingCredentials(path));
      const cached = cacheMs && identity ? authCache.get(identity) : undefined;
      const asked = generation;
      let auth: AuthorizerResult;
      try {
        auth = cached && cached.until > Date.now() ? cached.auth : await authorizer.invoke<AuthorizerResult>(authorizerEvent(event));
      } catch (err) {
        // The template's AUTHORIZER_FAILURE gateway response: a retryable 503.
        logger.error('local gateway: authorizer failed', { err: (err as Error).message, method, path });
        return send(res, authorizerFailure(path));
      }
      if (cacheMs && identity && auth !== cached?.auth && asked === generation) remember(identity, auth);
      authorize(event, auth);
      send(res, await invokeIntegration(target.r.fn, event));
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
    cachedAnswers: () => authCache.size,
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
