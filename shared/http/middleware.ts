import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type * as z from '../zod.ts';
import { hasDeskRole, keyExpired, keyExpiredMessage, PrincipalSchema, type DeskRole, type Principal } from '../auth/principal.ts';
import { missingScopes, scopeNeeded } from '../auth/scopes.ts';
import { withRequestScope } from '../db/client.ts';
import { BadRequestError, DomainError, NotFoundError, PayloadTooLargeError, ServiceUnavailableError, UnauthorizedError, ForbiddenError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { consume, RateLimitExceededError, type RateLimitState } from '../ratelimit/limiter.ts';
import { interfaceOf, RawAnswer, routeKey, takesIdempotencyKey, type Interface, type RouteContract } from './contract.ts';
import { toHttpError } from './error-map.ts';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { METRICS } from '../metrics.ts';
import { baseLogger, correlationIdFrom, logger, recordMetric, withCorrelation } from '../observability.ts';
import { beginIdempotent, completeIdempotent, IDEMPOTENCY_HEADER, releaseIdempotent, withHeldKey, withoutShownOnce, type HeldKey } from '../idempotency/service.ts';

/** Bodies above 1 MiB are refused with 413 (decisions §3). */
export const MAX_BODY_BYTES = 1024 * 1024;

type Out<S> = S extends z.ZodMiniType ? z.output<S> : undefined;

/** What a route implementation receives: the caller and the validated input. */
export interface RouteRequest<R extends RouteContract = RouteContract> {
  principal: Principal;
  params: Out<R['params']>;
  query: Out<R['query']>;
  body: Out<R['body']>;
  event: APIGatewayProxyEvent;
}

/** Route implementations, keyed by operation id; each returns the success body (nothing for 204). */
export type RouteHandlers<T extends readonly RouteContract[]> = {
  [R in T[number] as R['operationId']]: (req: RouteRequest<R>) => Promise<unknown>;
};

/**
 * Everything one request gathers on its way through the stack, in one typed
 * object: each step fills its part, the dispatch and the error responder read
 * it. Kept beside the middy request (keyed by it), never on the Lambda context.
 */
interface HttpRequest {
  iface: Interface;
  route?: RouteContract;
  /** Epoch ms after which no DynamoDB attempt starts or is waited on. */
  deadline?: number;
  principal?: Principal;
  /** The rate-limit count, started before the route runs; the route's writes wait for it. */
  count?: Promise<RateLimitState>;
  /** Its answer once settled (rateLimiter), for the headers of every authenticated answer. */
  rateLimit?: RateLimitState;
  rawBody?: unknown;
  /** The validated path parameters, query and body (inputValidator). */
  input?: { params: unknown; query: unknown; body: unknown };
  /** The Idempotency-Key this request holds; `recorded` once the create's transaction carried its answer. */
  idempotency?: HeldKey;
}

/**
 * A request never waits on the store longer than this, nor closer than
 * DEADLINE_MARGIN_MS to the function's own timeout (itself below API
 * Gateway's 29 s): a struggling store gets a 503 the caller can retry
 * instead of a 504 whose write may still commit behind it.
 */
export const REQUEST_DEADLINE_MS = 20_000;
const DEADLINE_MARGIN_MS = 3_000;

type Req = middy.Request<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;
type Middleware = middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>;

/** Each invocation's HttpRequest, by its event (the one object the dispatch and every step share). */
const requests = new WeakMap<APIGatewayProxyEvent, HttpRequest>();
const stateOf = (event: APIGatewayProxyEvent): HttpRequest => {
  let state = requests.get(event);
  if (!state) requests.set(event, (state = { iface: interfaceOf(event.resource ?? event.path ?? '') }));
  return state;
};

/** Zod issues as `{field, message}` pairs; the wrapper object (e.g. `ticket`) is left out of field names. */
export function fieldIssues(error: z.core.$ZodError, wrapper?: string): FieldIssue[] {
  return error.issues.map((i) => {
    const path = wrapper && i.path[0] === wrapper ? i.path.slice(1) : i.path;
    return { field: path.map(String).join('.') || wrapper || 'body', message: i.message };
  });
}

const describe = (issues: FieldIssue[]) => issues.map((i) => `${i.field}: ${i.message}`).join('; ');

/** Resolve the route and the error envelope first, so every later failure answers in the right shape. */
const routeResolver = (table: Map<string, RouteContract>): Middleware => ({
  before: function routeResolverBefore(request: Req) {
    const { resource, httpMethod } = request.event;
    const state = stateOf(request.event);
    const remaining = typeof request.context.getRemainingTimeInMillis === 'function' ? request.context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS : REQUEST_DEADLINE_MS;
    state.deadline = Date.now() + Math.max(0, Math.min(REQUEST_DEADLINE_MS, remaining));
    state.route = table.get(routeKey(httpMethod, resource));
    if (!state.route) throw new NotFoundError('Route');
  },
});

/**
 * The authorizer put either a principal or the reason it refused into the
 * request context. An API key's expiry is checked here on every request: the
 * authorizer refuses an expired key, but its answer may be a cached one given
 * before the key expired.
 */
const principalFromAuthorizer = (): Middleware => ({
  before: function principalFromAuthorizerBefore(request: Req) {
    const ctx = request.event.requestContext?.authorizer ?? {};
    if (ctx.authUnavailable) throw new ServiceUnavailableError();
    const parsed = PrincipalSchema.safeParse(ctx);
    if (!parsed.success) throw new UnauthorizedError(typeof ctx.authError === 'string' ? ctx.authError : 'Authentication required');
    if (keyExpired(parsed.data)) throw new UnauthorizedError(keyExpiredMessage(parsed.data.keyExpiresAt!));
    stateOf(request.event).principal = parsed.data;
  },
});

/**
 * The rate limit, settled here and nowhere else. Before: start counting the
 * request against the account's window without waiting; the count runs
 * beside the route's reads, and the route's writes wait for it (writeGate),
 * so a refused request changes nothing. After: the answer waits for the
 * count and carries its headers, or becomes the 429. On error: a request
 * over its limit is a 429 whatever else went wrong (as when the count ran
 * first), and Retry-After counts from when the answer leaves.
 */
const rateLimiter = (): Middleware => ({
  before: function rateLimiterBefore(request: Req) {
    const state = stateOf(request.event);
    const p = state.principal!;
    state.count = withRequestScope({ deadline: state.deadline }, () => consume(p.accountId, p.plan)).then(
      (counted) => (state.rateLimit = counted),
      (err) => {
        if (err instanceof RateLimitExceededError) {
          state.rateLimit = err.state;
          recordMetric(METRICS.requestsRateLimited);
        }
        throw err;
      },
    );
    // Settled in after or onError; this only keeps an early refusal from being reported as unhandled.
    state.count.catch(() => undefined);
  },
  after: async function rateLimiterAfter(request: Req) {
    const counted = await stateOf(request.event).count!;
    if (request.response) request.response = { ...request.response, headers: { ...request.response.headers, ...rateLimitHeaders(counted) } };
  },
  onError: async function rateLimiterOnError(request: Req) {
    const state = requests.get(request.event);
    if (!state?.count) return;
    try {
      await state.count;
    } catch (err) {
      if (err instanceof RateLimitExceededError || !(request.error instanceof DomainError)) request.error = err as Error;
    }
    if (request.error instanceof RateLimitExceededError) request.error = new RateLimitExceededError(request.error.state, Date.now());
  },
});

/**
 * How each interface names the role a route needs: user management speaks of
 * its own roles (decisions §1: member is the desk's agent).
 */
const ROLE_WORDS: Record<Interface, Record<DeskRole, string>> = {
  playbook: { viewer: 'viewer', agent: 'member', admin: 'admin' },
  helpdesk: { viewer: 'viewer', agent: 'agent', admin: 'admin' },
};

/**
 * Credential kind, API key scope and role the route asks for (decisions §1,
 * §18). The scope is checked here on every request, from the scopes the
 * authorizer's (possibly cached) answer carries.
 */
const accessGuard = (): Middleware => ({
  before: function accessGuardBefore(request: Req) {
    const { route, principal: p, iface } = stateOf(request.event);
    if (route!.auth === 'session' && p!.credential !== 'session') {
      throw new UnauthorizedError('This endpoint needs a session token (Authorization: Bearer <session token>); API keys are not accepted here');
    }
    const [missing] = missingScopes(p!.scopes, [scopeNeeded(route!.method, iface)]);
    if (missing) throw new ForbiddenError(`This API key lacks the ${missing} scope this request needs`);
    if (route!.access && !hasDeskRole(p!.role, route!.access)) throw new ForbiddenError(`This action needs the ${ROLE_WORDS[iface][route!.access]} role or above`);
  },
});

/** Size limit, then JSON parsing: malformed JSON is a 400 in either interface. */
const jsonBodyParser = (): Middleware => ({
  before: function jsonBodyParserBefore(request: Req) {
    const { body, isBase64Encoded } = request.event;
    if (body === null || body === undefined || body === '') return;
    const raw = isBase64Encoded ? Buffer.from(body, 'base64') : Buffer.from(body, 'utf8');
    if (raw.length > MAX_BODY_BYTES) throw new PayloadTooLargeError();
    const state = stateOf(request.event);
    if (!state.route!.body) return;
    try {
      state.rawBody = JSON.parse(raw.toString('utf8'));
    } catch {
      throw new BadRequestError('Request body is not valid JSON', [{ field: 'body', message: 'malformed JSON' }]);
    }
  },
});

const headerValue = (headers: Record<string, string | undefined> | null, name: string) => Object.entries(headers ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];

/**
 * Idempotent creates: the first request with a key holds it while it runs and
 * leaves its answer; a repeat gets that answer (Idempotency-Replayed: true)
 * and writes nothing. A failed request releases the key for the client's retry.
 */
const idempotency = (): Middleware => ({
  before: async function idempotencyBefore(request: Req) {
    const state = stateOf(request.event);
    const key = headerValue(request.event.headers, IDEMPOTENCY_HEADER);
    if (key === undefined || !takesIdempotencyKey(state.route!)) return;
    // The key is a write: it waits for the rate-limit count, so a refused request neither claims nor replays.
    await state.count;
    const { httpMethod: method, resource, pathParameters } = request.event;
    const start = await beginIdempotent(state.principal!.accountId, key, { method, resource, pathParameters, body: state.rawBody });
    if ('claim' in start) {
      state.idempotency = { claim: start.claim, status: state.route!.success.status, shownOnce: state.route!.shownOnce, recorded: false };
      return;
    }
    // An early answer skips every `after` step, the rate limiter's included: it carries the count's headers itself.
    return {
      statusCode: start.replay.status,
      headers: { 'Content-Type': 'application/json', 'Idempotency-Replayed': 'true', ...rateLimitHeaders(state.rateLimit) },
      body: start.replay.body,
    };
  },
  after: async function idempotencyAfter(request: Req) {
    const { idempotency: key, route } = stateOf(request.event);
    // A create whose transaction carried its answer (answerWrites) has it recorded already.
    if (key && !key.recorded && request.response) await completeIdempotent(key.claim, request.response.statusCode, withoutShownOnce(request.response.body, route!.shownOnce));
  },
  onError: async function idempotencyOnError(request: Req) {
    // Released only while still running: a create that committed its answer keeps it, whatever failed after.
    const key = requests.get(request.event)?.idempotency;
    if (key) await releaseIdempotent(key.claim);
  },
});

/**
 * The route's path parameters, query and body against its zod contract (after
 * the idempotency claim, so a repeat with another body is refused by its key).
 * Ids that cannot exist are not found; a bad query is a 400; a body that is no
 * object or lacks its wrapper is a 400; invalid values are the interface's 422.
 */
const inputValidator = (): Middleware => ({
  before: function inputValidatorBefore(request: Req) {
    const state = stateOf(request.event);
    state.input = parseInput(state.route!, request.event, state.rawBody);
  },
});

function parseInput(route: RouteContract, event: APIGatewayProxyEvent, rawBody: unknown) {
  const params = route.params ? route.params.safeParse(event.pathParameters ?? {}) : undefined;
  // Ids that cannot exist (too long, wrong characters) are simply not found.
  if (params && !params.success) throw new NotFoundError('Resource');

  let query: unknown;
  if (route.query) {
    // An empty parameter (`?search=`) means the parameter is absent.
    const given = Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter(([, v]) => v !== undefined && v !== ''));
    const q = route.query.safeParse(given);
    if (!q.success) {
      const issues = fieldIssues(q.error);
      throw new BadRequestError(`Invalid query parameters: ${describe(issues)}`, issues);
    }
    query = q.data;
  }

  let body: unknown;
  if (route.body) {
    if (typeof rawBody !== 'object' || rawBody === null || Array.isArray(rawBody)) {
      throw new BadRequestError('Request body must be a JSON object', [{ field: 'body', message: 'expected a JSON object' }]);
    }
    if (route.wrapper) {
      const inner = (rawBody as Record<string, unknown>)[route.wrapper];
      if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
        throw new BadRequestError(`Request body must contain a "${route.wrapper}" object`, [{ field: route.wrapper, message: 'required object' }]);
      }
    }
    const b = route.body.safeParse(rawBody);
    if (!b.success) {
      const issues = fieldIssues(b.error, route.wrapper);
      throw new ValidationError(`Invalid request: ${describe(issues)}`, issues);
    }
    body = b.data;
  }
  return { params: params?.data, query, body };
}

function rateLimitHeaders(state: RateLimitState | undefined): Record<string, string> {
  if (!state) return {};
  return { 'X-RateLimit-Limit': String(state.limit), 'X-RateLimit-Remaining': String(state.remaining), 'X-RateLimit-Reset': String(state.reset) };
}

/** Map any error to the interface's envelope; unexpected ones are logged and answered as a bare 500. */
const errorResponder = (): Middleware => ({
  onError: async function errorResponderOnError(request: Req) {
    const state = stateOf(request.event);
    const mapped = toHttpError(request.error, state.iface);
    if (mapped.status >= 500) logger.error('unhandled error', { err: request.error, path: request.event.path, method: request.event.httpMethod });
    request.response = {
      statusCode: mapped.status,
      headers: { 'Content-Type': 'application/json', ...mapped.headers, ...rateLimitHeaders(state.rateLimit) },
      body: JSON.stringify(mapped.body),
    };
  },
});

/**
 * The one middleware stack of every endpoint group, in order: route, principal,
 * rate limit (counted beside the route, settled before answering), access,
 * body, idempotency, validation, then the route's implementation; errors
 * mapped last. A group handler is `httpGroup(routes, handlers)`.
 */
export function httpGroup<const T extends readonly RouteContract[]>(routes: T, handlers: NoInfer<RouteHandlers<T>>) {
  const table = new Map<string, RouteContract>(routes.map((r) => [routeKey(r.method, r.path), r]));
  const impl = handlers as unknown as Record<string, (req: RouteRequest) => Promise<unknown>>;
  const stack = middy<APIGatewayProxyEvent, APIGatewayProxyResult, Error, Context>()
    .use(injectLambdaContext(baseLogger))
    .use(errorResponder())
    .use(routeResolver(table))
    .use(principalFromAuthorizer())
    .use(rateLimiter())
    .use(accessGuard())
    .use(jsonBodyParser())
    .use(idempotency())
    .use(inputValidator())
    .handler(async function dispatch(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
      const { route, principal, input, count, deadline, idempotency } = stateOf(event);
      const run = () => impl[route!.operationId]({ principal: principal!, ...input!, event } as RouteRequest);
      const result = await withRequestScope({ deadline, writeGate: count }, () => withHeldKey(idempotency, run));
      if (route!.success.status === 204) return { statusCode: 204, headers: {}, body: '' };
      if (result instanceof RawAnswer) {
        if (!result.body) return { statusCode: 302, headers: { Location: result.location! }, body: '' };
        return { statusCode: route!.success.status, headers: { 'Content-Type': result.contentType }, body: Buffer.from(result.body).toString('base64'), isBase64Encoded: true };
      }
      return { statusCode: route!.success.status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(result) };
    });
  /**
   * Each request runs under its correlation id (the caller's `x-request-id`, or a new one), which its log lines and
   * the events it records carry, and which is echoed as `X-Request-Id`.
   */
  return async function correlatedHandler(event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> {
    const id = correlationIdFrom(headerValue(event.headers, 'x-request-id'));
    const result = await withCorrelation(id, () => stack(event, context));
    return { ...result, headers: { ...result.headers, 'X-Request-Id': id } };
  };
}
