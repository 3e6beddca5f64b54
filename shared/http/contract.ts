import type { z } from 'zod';
import type { DeskRole } from '../auth/principal.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The endpoint groups; each is one Lambda function (architecture guide). */
export type GroupName = 'users' | 'tickets' | 'ticketFields' | 'webhooks' | 'contacts' | 'organizations' | 'messages' | 'groups' | 'automations' | 'slaPolicies' | 'history' | 'jobs';

/**
 * One endpoint's contract: the single source for routing (local gateway and
 * API Gateway resources), request validation, and the OpenAPI document.
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
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** The body schema. With `wrapper`, a body without that object is a 400, not a 422. */
  body?: z.ZodType;
  wrapper?: string;
  success: { status: 200 | 201 | 202 | 204; description: string; schema?: z.ZodType };
  /** A POST answering 202 that creates something to poll (a bulk job): it takes an Idempotency-Key like a 201 create. */
  creates?: boolean;
  /** Error statuses the endpoint can answer besides 401/429/413/500, for the OpenAPI document. */
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
