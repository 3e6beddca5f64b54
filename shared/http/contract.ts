import type * as z from '../zod.ts';
import type { DeskRole } from '../auth/principal.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The endpoint groups; each is one Lambda function (architecture guide). */
export type GroupName =
  'users' | 'tickets' | 'ticketFields' | 'webhooks' | 'contacts' | 'organizations' | 'messages' | 'groups' | 'automations' | 'slaPolicies' | 'history' | 'jobs' | 'satisfaction' | 'views';

/**
 * One endpoint's contract: the single source for the OpenAPI document, which
 * is API Gateway's definition and the local gateway's routes, and for request validation.
 */
export interface RouteContract {
  operationId: string;
  method: Method;
  /** API Gateway resource path, e.g. /playbook/api/v1/users/{user_id}. */
  path: string;
  group: GroupName;
  summary: string;
  description?: string;
  /** Which credentials the endpoint accepts (decisions §1). Default: API key or session token. */
  auth?: 'any' | 'session';
  /**
   * A public page (no credentials): API Gateway runs no authorizer and asks no API key for it (so no usage plan
   * meters it), and throttles it on its own, per method in the stage's settings (requests per second, burst).
   * The local gateway skips the authorizer for it too. `auth` and `access` do not apply.
   */
  public?: PublicThrottle;
  /** Minimum support-desk role (on user-management routes: owner/admin = admin, member = agent); finer user rules live in the users service. */
  access?: DeskRole;
  params?: z.ZodMiniObject;
  query?: z.ZodMiniObject;
  /** The body schema. With `wrapper`, a body without that object is a 400, not a 422. */
  body?: z.ZodMiniType;
  wrapper?: string;
  success: { status: 200 | 201 | 202 | 204; description: string; schema?: z.ZodMiniType };
  /** A POST answering 202 that creates something to poll (a bulk job): it takes an Idempotency-Key like a 201 create. */
  creates?: boolean;
  /** Error statuses the route's own rules can answer (its service's refusals); those of its shape come from errorStatuses. */
  errors?: readonly number[];
  /** Answer fields shown only once (a new credential's secret): an Idempotency-Key repeat answers the first answer without them, and they are never stored. */
  shownOnce?: readonly string[];
}

/** The stage throttle of a public route (API Gateway method settings): steady requests per second, and the burst. */
export interface PublicThrottle {
  rateLimit: number;
  burstLimit: number;
}

/** Keep literal operation ids so handler maps are checked against the contract. */
export const defineRoutes = <const T extends readonly RouteContract[]>(routes: T) => routes;

export type OperationId<T extends readonly RouteContract[]> = T[number]['operationId'];

export const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** Which error envelope a path answers in. */
export type Interface = 'playbook' | 'helpdesk';
export const interfaceOf = (path: string): Interface => (path.startsWith('/playbook') ? 'playbook' : 'helpdesk');

/** What API Gateway's own 401 says when a request has no Authorization header (the authorizer cache's identity source). */
export const MISSING_CREDENTIALS_MESSAGE = 'Missing credentials: send Authorization: Bearer <API key or session token>';

/** Creates (POST answering 201, or 202 with a job to poll) take an optional Idempotency-Key (decisions §3). */
export const takesIdempotencyKey = (route: RouteContract) => route.method === 'POST' && (route.success.status === 201 || (route.success.status === 202 && route.creates === true));

/**
 * Every error status a route can answer (each route lists them all in the OpenAPI document): its own `errors`, and
 * what the gateway and the middleware stack (shared/http/middleware.ts) answer any route of its shape:
 * - always: 413 (body over 1 MiB), 429 (rate limit, or a public route's stage throttle), 500, 503 (store busy,
 *   authorizer failure); 401 (credentials) unless the route is public;
 * - 403 where an API key is accepted (its scopes may not cover the route) or a role is needed (not on a public route);
 * - 404 where the path has ids (an id that cannot exist is not found);
 * - 400 where there is a query or a body (malformed JSON, not an object, missing wrapper, bad query), and for
 *   invalid values of a body: 400 in user management, 422 in the support desk (decisions §3);
 * - where an Idempotency-Key is taken: 400 (malformed key), 409 (the first still running), and the invalid-values
 *   status (the same key with another body).
 */
export function errorStatuses(route: RouteContract): number[] {
  const statuses = new Set<number>([413, 429, 500, 503, ...(route.errors ?? [])]);
  const invalidValues = interfaceOf(route.path) === 'playbook' ? 400 : 422;
  if (!route.public) statuses.add(401);
  if (!route.public && (route.auth !== 'session' || route.access)) statuses.add(403);
  if (route.params) statuses.add(404);
  if (route.query) statuses.add(400);
  if (route.body) statuses.add(400).add(invalidValues);
  if (takesIdempotencyKey(route)) statuses.add(400).add(409).add(invalidValues);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * A route's answer that is not JSON (a message's raw mail, decisions §24): the bytes with their media type, sent
 * base64-encoded through API Gateway (a binary media type of the API), or a redirect to where they are.
 */
export class RawAnswer {
  constructor(
    readonly contentType: string,
    readonly body: Uint8Array | null,
    readonly location?: string,
  ) {}
}
