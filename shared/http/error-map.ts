import {
  AlreadyExistsError,
  BadRequestError,
  ConflictError,
  ForbiddenError,
  InvalidCursorError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitedError,
  RuleViolationError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnprocessableError,
  ValidationError,
  type RuleCode,
} from '../domain/errors.ts';
import type { Interface } from './contract.ts';
import { storeLimitError } from '../db/store-errors.ts';

export interface HttpError {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Status of each support-desk rule code (api-spec "Support-desk error codes"). */
const RULE_STATUS: Record<RuleCode, number> = {
  IMMUTABLE_FIELD: 422,
  SYSTEM_FIELD: 422,
  INVALID_FIELD_TYPE: 422,
  DUPLICATE_OPTION_VALUE: 409,
  TOO_MANY_OPTIONS: 422,
  OPTION_IN_USE: 422,
  TICKET_CLOSED: 403,
  CLOSED_STATUS_SYSTEM_ONLY: 403,
};

/** Domain error class -> status and code in each interface. First match wins (subclasses first). */
const TABLE: Array<[abstract new (...a: never[]) => Error, number, string, string]> = [
  [BadRequestError, 400, 'validation_error', 'BAD_REQUEST'],
  [ValidationError, 422, 'validation_error', 'VALIDATION_ERROR'],
  [InvalidCursorError, 400, 'invalid_cursor', 'BAD_REQUEST'],
  [UnauthorizedError, 401, 'unauthorized', 'UNAUTHORIZED'],
  [ForbiddenError, 403, 'forbidden', 'FORBIDDEN'],
  [NotFoundError, 404, 'resource_not_found', 'NOT_FOUND'],
  [AlreadyExistsError, 409, 'resource_already_exists', 'CONFLICT'],
  [ConflictError, 409, 'conflict', 'CONFLICT'],
  [RateLimitedError, 429, 'rate_limit_exceeded', 'RATE_LIMITED'],
  [PayloadTooLargeError, 413, 'payload_too_large', 'PAYLOAD_TOO_LARGE'],
];

/**
 * AWS errors (DynamoDB, S3, SQS, EventBridge) that mean "busy or unreachable,
 * retry": never the caller's fault, never a 500. The throttling names are
 * those the SDK's retry strategy treats as throttling, for each service's
 * spelling (SQS's RequestThrottled, S3's SlowDown), so a call the SDK gave up
 * retrying is a 503 whichever service refused it.
 */
const UNAVAILABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'ThrottledException',
  'TooManyRequestsException',
  'SlowDown',
  'InternalServerError',
  'ServiceUnavailable',
  'ServiceUnavailableException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'AbortError',
  'LimitExceededException',
  // A transaction sent again under its ClientRequestToken while DynamoDB still applies the first: its outcome is not known yet.
  'TransactionInProgressException',
]);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EAI_AGAIN', 'ENOTFOUND']);
/** Transaction cancellation reasons that are load, not a failed condition. */
const UNAVAILABLE_REASONS = new Set(['ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/** Whether an error is the data store throttling or failing to answer (503 + Retry-After). */
export function isStoreUnavailable(err: unknown): boolean {
  if (err instanceof ServiceUnavailableError) return true;
  if (!(err instanceof Error)) return false;
  const e = err as Error & { code?: string; $metadata?: { httpStatusCode?: number }; $retryable?: { throttling?: boolean }; CancellationReasons?: Array<{ Code?: string }> };
  if (UNAVAILABLE_NAMES.has(e.name) || (e.code && UNAVAILABLE_CODES.has(e.code)) || e.$retryable?.throttling) return true;
  if (e.name === 'TransactionCanceledException') return (e.CancellationReasons ?? []).some((r) => UNAVAILABLE_REASONS.has(r.Code ?? ''));
  const status = e.$metadata?.httpStatusCode;
  return status !== undefined && (status >= 500 || status === 429);
}

/**
 * The one place where errors become HTTP: status, envelope of the interface,
 * and nothing of an unexpected error's internals.
 */
export function toHttpError(err: unknown, iface: Interface): HttpError {
  // A store limit reached by input (key or item size) is the caller's 422, wherever it surfaced.
  err = storeLimitError(err) ?? err;
  let status = 500;
  let code = iface === 'playbook' ? 'internal_error' : 'INTERNAL_ERROR';
  let message = 'Internal error';
  const headers: Record<string, string> = {};

  if (err instanceof RuleViolationError) {
    status = err.opts.asInput ? 422 : RULE_STATUS[err.rule];
    code = iface === 'playbook' ? 'conflict' : err.rule;
    message = err.message;
  } else if (isStoreUnavailable(err)) {
    status = 503;
    code = iface === 'playbook' ? 'service_unavailable' : 'SERVICE_UNAVAILABLE';
    message = err instanceof ServiceUnavailableError ? err.message : 'The service is temporarily overloaded; retry shortly';
    headers['Retry-After'] = String(err instanceof ServiceUnavailableError ? err.retryAfterSeconds : 1);
  } else {
    const row = TABLE.find(([cls]) => err instanceof cls);
    if (row) {
      [, status, code] = row;
      if (iface === 'helpdesk') code = row[3];
      message = (err as Error).message;
    }
  }
  // User management reports every invalid input as 400 (api-spec Errors), but for what §18 names 422.
  if (iface === 'playbook' && status === 422 && !(err instanceof UnprocessableError)) status = 400;
  if (err instanceof RateLimitedError) headers['Retry-After'] = String(err.retryAfterSeconds);

  if (iface === 'playbook') {
    const field = err instanceof ValidationError ? err.field : undefined;
    return { status, headers, body: { error: { code, message, ...(field ? { field } : {}) } } };
  }
  const details = err instanceof ValidationError && err.details.length ? err.details : undefined;
  return { status, headers, body: { success: false, error: { code, message, ...(details ? { details } : {}) } } };
}
