/**
 * Injected faults (decisions §19): one middleware on each AWS SDK client of
 * the functions that makes a fraction of its calls fail the way the service
 * fails. It sits on the client, after the SDK's retry middleware, so each
 * attempt is judged on its own and the deployed code's retry and error paths
 * are what runs: a throttle is retried with the SDK's throttling backoff, a
 * 500 with its server-error backoff, a hung call ends at the client's own
 * request timeout, and whatever the retries do not absorb reaches the code
 * that called. Nothing is added unless the local stack sets FAULTS for a
 * function (no deployed template carries it).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { FinalizeRequestMiddleware, HandlerExecutionContext, InitializeMiddleware, MiddlewareStack } from '@smithy/types';
import { faultSettings, type Fault, type FaultKind, type FaultService } from './settings.ts';

/**
 * Where a fault is reported as it is injected: the local stack's worker sets
 * this (local/lambda/worker.mjs) to count them in its main thread, which
 * prints the counts when `npm start` stops.
 */
export const FAULT_SINK = Symbol.for('support-desk.fault-sink');

type Sink = (service: FaultService, kind: FaultKind) => void;

/** How a client that takes faults is configured: its request timeout, which a timeout fault waits out. */
export interface FaultOptions {
  /** The client's `requestTimeout` (ms), set with `throwOnRequestTimeout`: a hung attempt fails after it as the SDK's TimeoutError. */
  requestTimeoutMs: number;
  /** The settings to act on (default: this process's, read once); tests pass their own. */
  settings?: ReturnType<typeof faultSettings>;
}

/** The service's own errors for a throttle and for a 500/503: name and HTTP status, as its protocol reports them. */
const SERVICE_ERRORS: Record<FaultService, Record<'throttle' | 'error', ReadonlyArray<readonly [string, number]>>> = {
  dynamodb: {
    throttle: [
      ['ProvisionedThroughputExceededException', 400],
      ['ThrottlingException', 400],
    ],
    error: [
      ['InternalServerError', 500],
      ['ServiceUnavailable', 503],
    ],
  },
  events: {
    throttle: [['ThrottlingException', 400]],
    error: [
      ['InternalException', 500],
      ['ServiceUnavailable', 503],
    ],
  },
  sqs: {
    throttle: [['RequestThrottled', 400]],
    error: [
      ['InternalFailure', 500],
      ['ServiceUnavailable', 503],
    ],
  },
  s3: {
    throttle: [['SlowDown', 503]],
    error: [
      ['InternalError', 500],
      ['ServiceUnavailable', 503],
    ],
  },
};

/** Entry error codes EventBridge answers for entries it could not take this time. */
const PARTIAL_ENTRY_ERRORS = [
  ['InternalFailure', 'Internal service failure (injected fault)'],
  ['ThrottlingException', 'Rate exceeded (injected fault)'],
] as const;

const oneOf = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];

/**
 * A service error as the SDK's deserializer builds it (a ServiceException:
 * name, `$fault`, `$metadata`), with the `$retryable` trait a throttling error
 * carries, so the SDK's retry strategy classifies it as it would AWS's.
 */
function serviceError(service: FaultService, kind: 'throttle' | 'error', commandName: string | undefined): Error {
  const [name, httpStatusCode] = oneOf(SERVICE_ERRORS[service][kind]);
  const message = kind === 'throttle' ? `Rate of requests exceeded (injected fault on ${commandName})` : `We encountered an internal error. Please try again. (injected fault on ${commandName})`;
  return Object.assign(new Error(message), {
    name,
    $fault: httpStatusCode >= 500 ? 'server' : 'client',
    $metadata: { httpStatusCode, requestId: `injected-${Math.random().toString(36).slice(2, 10)}` },
    ...(kind === 'throttle' ? { $retryable: { throttling: true } } : {}),
  });
}

/** What the SDK's node handler throws when a request exceeds `requestTimeout` (with throwOnRequestTimeout). */
const timeoutError = (ms: number) =>
  Object.assign(new Error(`@smithy/node-http-handler - [ERROR] a request has exceeded the configured ${ms} ms requestTimeout. (injected fault)`), { name: 'TimeoutError', code: 'ETIMEDOUT' });

/** The call's abort signal (an `abortSignal` option of `send`), which the SDK hands to its handler through the context. */
const abortSignalOf = (context: HandlerExecutionContext): AbortSignal | undefined => (context as { __smithy_context?: { abortSignal?: AbortSignal } }).__smithy_context?.abortSignal;

let counts: Partial<Record<`${FaultService}:${FaultKind}`, number>> = {};

function report(service: FaultService, kind: FaultKind): void {
  counts[`${service}:${kind}`] = (counts[`${service}:${kind}`] ?? 0) + 1;
  (globalThis as { [FAULT_SINK]?: Sink })[FAULT_SINK]?.(service, kind);
}

/** Faults injected by this process so far, by `service:kind` (and reset them, for a test). */
export function injectedFaults(reset = false): Record<string, number> {
  const out = { ...counts };
  if (reset) counts = {};
  return out;
}

/** One draw per attempt: at most one of the service's kinds, each with its rate. */
function draw(faults: readonly Fault[]): Fault | undefined {
  let r = Math.random();
  for (const f of faults) {
    if (r < f.rate) return f;
    r -= f.rate;
  }
  return undefined;
}

/**
 * Add the FAULTS of `service` to a client (no-op when there are none, and
 * outside a function). Call it where the client is created, once.
 */
export function injectFaults(client: { middlewareStack: MiddlewareStack<any, any> }, service: FaultService, opts: FaultOptions): void {
  const { FAULTS, AWS_LAMBDA_FUNCTION_NAME } = opts.settings ?? faultSettings();
  if (!AWS_LAMBDA_FUNCTION_NAME) return;
  const perAttempt = FAULTS.filter((f) => f.service === service && f.kind !== 'partial');
  const partial = FAULTS.find((f) => f.service === service && f.kind === 'partial');

  if (perAttempt.length) {
    const attemptFaults: FinalizeRequestMiddleware<any, any> = (next, context) =>
      async function injectedFaultsAttempt(args) {
        const fault = draw(perAttempt);
        if (!fault) return next(args);
        report(service, fault.kind);
        if (fault.kind !== 'timeout') throw serviceError(service, fault.kind as 'throttle' | 'error', context.commandName);
        // The attempt hangs until the client's request timeout fires, or the caller's abort signal does first.
        const signal = abortSignalOf(context);
        try {
          await sleep(opts.requestTimeoutMs, undefined, { signal });
        } catch {
          throw Object.assign(new Error('Request aborted'), { name: 'AbortError' });
        }
        throw timeoutError(opts.requestTimeoutMs);
      };
    // Last of the per-attempt step: after the retry middleware (and signing), so every attempt draws anew.
    client.middlewareStack.add(attemptFaults, { step: 'finalizeRequest', priority: 'low', name: 'injectedFaults' });
  }

  if (partial) {
    const partialFailures: InitializeMiddleware<any, any> = (next, context) =>
      async function injectedPartialFailures(args) {
        const entries = (args.input as { Entries?: unknown[] }).Entries ?? [];
        if (context.commandName !== 'PutEventsCommand' || !entries.length || !(Math.random() < partial.rate)) return next(args);
        // At least one entry fails; each other one with even odds. The failed ones are never sent, as EventBridge drops them.
        const first = Math.floor(Math.random() * entries.length);
        const failed = new Set(entries.flatMap((_, i) => (i === first || Math.random() < 0.5 ? [i] : [])));
        report(service, 'partial');
        const rest = entries.filter((_, i) => !failed.has(i));
        const sent = rest.length
          ? await next({ ...args, input: { ...(args.input as object), Entries: rest } })
          : { output: { $metadata: { httpStatusCode: 200 }, FailedEntryCount: 0, Entries: [] }, response: undefined };
        const answered = [...((sent.output as { Entries?: unknown[] }).Entries ?? [])];
        const merged = entries.map((_, i) => {
          if (!failed.has(i)) return answered.shift();
          const [ErrorCode, ErrorMessage] = oneOf(PARTIAL_ENTRY_ERRORS);
          return { ErrorCode, ErrorMessage };
        });
        const failedCount = ((sent.output as { FailedEntryCount?: number }).FailedEntryCount ?? 0) + failed.size;
        return { ...sent, output: { ...(sent.output as object), Entries: merged, FailedEntryCount: failedCount } };
      };
    client.middlewareStack.add(partialFailures, { step: 'initialize', name: 'injectedPartialFailures' });
  }
}
