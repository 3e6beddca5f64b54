/**
 * Domain errors. They know nothing of HTTP: shared/http/error-map.ts turns
 * each class into a status code and the envelope of the interface.
 */
export interface FieldIssue {
  field: string;
  message: string;
}

export class DomainError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A well-formed request whose values break the contract (body values). */
export class ValidationError extends DomainError {
  constructor(
    message: string,
    readonly details: FieldIssue[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
  get field(): string | undefined {
    return this.details[0]?.field;
  }
}

/** The request itself is malformed: bad JSON, missing wrapper, invalid query parameters. */
export class BadRequestError extends ValidationError {}

/** Values valid in themselves that this caller may not ask for (a key outliving the key that makes it, decisions §18): 422 in both interfaces. */
export class UnprocessableError extends ValidationError {}

export class InvalidCursorError extends DomainError {
  constructor(message = 'Cursor is invalid or expired; restart pagination without a cursor') {
    super(message);
  }
}

export class UnauthorizedError extends DomainError {}
export class ForbiddenError extends DomainError {}

export class NotFoundError extends DomainError {
  constructor(readonly resource: string) {
    super(`${resource} not found`);
  }
}

/** The request conflicts with current state (e.g. deleting the owner). */
export class ConflictError extends DomainError {}
/** A unique value is already taken (e.g. an email within the account). */
export class AlreadyExistsError extends ConflictError {}

export class RateLimitedError extends DomainError {
  constructor(readonly retryAfterSeconds: number) {
    super('Rate limit exceeded; retry after the window resets');
  }
}

/**
 * The store throttled or did not answer in time: the request may be retried
 * (503 with Retry-After). Nothing about it is the caller's fault.
 */
export class ServiceUnavailableError extends DomainError {
  constructor(
    message = 'The service is temporarily overloaded; retry shortly',
    readonly retryAfterSeconds = 1,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor() {
    super('Request body exceeds 1 MiB');
  }
}

/**
 * A named support-desk rule (TICKET_CLOSED, SYSTEM_FIELD, ...). The rule name
 * is the public error code; its status lives in the HTTP error map.
 */
export type RuleCode = 'IMMUTABLE_FIELD' | 'SYSTEM_FIELD' | 'INVALID_FIELD_TYPE' | 'DUPLICATE_OPTION_VALUE' | 'TOO_MANY_OPTIONS' | 'OPTION_IN_USE' | 'TICKET_CLOSED' | 'CLOSED_STATUS_SYSTEM_ONLY';

export class RuleViolationError extends DomainError {
  constructor(
    readonly rule: RuleCode,
    message: string,
    /** `asInput`: the rule refuses a ticket the request names rather than the resource it acts on (a merge's closed target, decisions §20), answered as invalid input. */
    readonly opts: { asInput?: boolean } = {},
  ) {
    super(message);
  }
}
