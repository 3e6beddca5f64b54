import { AsyncLocalStorage } from 'node:async_hooks';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { FinalizeRequestMiddleware } from '@smithy/types';
import { ConflictError, ServiceUnavailableError } from '../domain/errors.ts';
import { injectFaults } from '../faults/inject.ts';
import { withoutSdkLogger } from '../sdk-client.ts';
import { dbSettings } from './settings.ts';

const { AWS_REGION, DYNAMODB_ENDPOINT, DYNAMODB_REQUEST_TIMEOUT_MS } = dbSettings();

/**
 * Per-attempt socket limits: a DynamoDB call answers in milliseconds, so an
 * attempt that hangs for seconds is retried (up to MAX_ATTEMPTS) rather than
 * waited on until the function times out. The request timeout is 5 s unless
 * the local stack's tests set a shorter one (DYNAMODB_REQUEST_TIMEOUT_MS).
 */
export const DDB_TIMEOUTS = { connectionTimeout: 3_000, requestTimeout: DYNAMODB_REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true } as const;
const MAX_ATTEMPTS = 3;

/** The one DynamoDB client of a process, created at module load. */
export const ddb = DynamoDBDocumentClient.from(
  withoutSdkLogger(
    new DynamoDBClient({
      region: AWS_REGION,
      maxAttempts: MAX_ATTEMPTS,
      requestHandler: { ...DDB_TIMEOUTS },
      ...(DYNAMODB_ENDPOINT ? { endpoint: DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    }),
  ),
  { marshallOptions: { removeUndefinedValues: true } },
);
injectFaults(ddb, 'dynamodb', { requestTimeoutMs: DDB_TIMEOUTS.requestTimeout });

export const tableName = (): string => dbSettings().TABLE_NAME;

/**
 * What one API request imposes on every DynamoDB call it makes: a deadline
 * (epoch ms) after which no attempt starts or is waited on, and a gate that
 * writes wait for (the rate-limit count, run in parallel with the reads).
 */
export interface RequestScope {
  deadline?: number;
  writeGate?: Promise<unknown>;
  /** The oldest change-index stamp (`updatedAt`, epoch ms) the write carries: no attempt starts STAMP_MAX_AGE_MS after it. */
  stampedAt?: number;
}

/**
 * How long after its `updatedAt` a change may still be sent to the store at
 * its place in the change index. The incremental export reads that index up
 * to 10 s ago (shared/exports/service.ts), so a change must commit (and reach
 * the index) before readers pass its place: a write sent later than this is
 * first moved to the current instant in the index (transact.ts freshStamps),
 * and an attempt the SDK would send later still is stopped here and sent
 * again, moved (docs/history.md).
 */
export const STAMP_MAX_AGE_MS = 4_000;

/** Thrown instead of sending an attempt whose change-index place is too old; transact.ts moves it and sends it again. */
export class StaleStampError extends ConflictError {}

/** Run a write with the oldest change-index stamp among its items (see STAMP_MAX_AGE_MS). */
export const withStamp = <T>(stampedAt: number | undefined, fn: () => Promise<T>): Promise<T> => (stampedAt === undefined ? fn() : scope.run({ ...scope.getStore(), stampedAt }, fn));

const scope = new AsyncLocalStorage<RequestScope>();

/** Run `fn` with a request scope; calls made outside one (CLI, consumers) only have the SDK timeouts. */
export const withRequestScope = <T>(s: RequestScope, fn: () => Promise<T>): Promise<T> => scope.run(s, fn);

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'TransactWriteItemsCommand', 'BatchWriteItemCommand']);

const deadlineError = () => new ServiceUnavailableError('The request ran out of time waiting for the data store; retry shortly');
/** A transaction whose earlier attempt may have committed was not sent again in time: the caller cannot know whether it applied. */
const unknownOutcomeError = () => new ServiceUnavailableError('The request ran out of time waiting for the data store, and its change may have been applied; retry it with the same Idempotency-Key');

/** The attempt the SDK's retry middleware is sending (its `amz-sdk-request: attempt=N; max=M` header): 1 for the first. */
const attemptOf = (args: { request: unknown }): number => Number(/attempt=(\d+)/.exec(String((args.request as { headers?: Record<string, string> }).headers?.['amz-sdk-request'] ?? ''))?.[1] ?? 1);

/**
 * Where a committed write to the table is reported, if anything listens: the local stack's worker does
 * (local/lambda/worker.mjs), so that its stream poller reads the stream after a write rather than after every
 * invocation (a read invoked a round of stream reads for nothing: 2 ms of Node CPU and 1.5 ms of the store's per GET).
 * Nothing listens in AWS, where Lambda reads the stream on its own.
 */
export const WRITE_SINK = Symbol.for('support-desk.write-sink');

/** Whether a write command's input names the table (the rate-limit counters live in a table of their own, with no stream). */
function writesTable(input: Record<string, unknown>, table: string): boolean {
  if (input.TableName === table) return true;
  const items = input.TransactItems as Array<Record<string, { TableName?: string } | undefined>> | undefined;
  if (items?.some((i) => (i.Put ?? i.Update ?? i.Delete)?.TableName === table)) return true;
  return Object.hasOwn((input.RequestItems as object | undefined) ?? {}, table);
}

ddb.middlewareStack.add(
  (next, context) => async (args) => {
    const sink = (globalThis as Record<symbol, (() => void) | undefined>)[WRITE_SINK];
    const answer = await next(args);
    if (sink && WRITES.has(String(context.commandName)) && writesTable(args.input as Record<string, unknown>, tableName())) sink();
    return answer;
  },
  { step: 'initialize', name: 'writeSink' },
);

ddb.middlewareStack.add(
  (next, context) => async (args) => {
    const s = scope.getStore();
    if (s?.writeGate && WRITES.has(String(context.commandName))) await s.writeGate;
    if (s?.deadline !== undefined && Date.now() >= s.deadline) throw deadlineError();
    return next(args);
  },
  { step: 'initialize', name: 'requestScope' },
);

const attemptDeadline: FinalizeRequestMiddleware<object, object> = (next, context) => async (args) => {
  // A transaction's retry goes out as it was first sent, under the same ClientRequestToken, which DynamoDB applies at
  // most once: its earlier attempt may have committed with no answer (a timeout), and a transaction sent anew (restamped,
  // so under a new token) would then run twice. transact.ts moves its change-index places if it went out late.
  const resent = context.commandName === 'TransactWriteItemsCommand' && attemptOf(args) > 1;
  const stampedAt = scope.getStore()?.stampedAt;
  if (!resent && stampedAt !== undefined && Date.now() - stampedAt > STAMP_MAX_AGE_MS) throw new StaleStampError('The change took too long to commit; it is stamped anew');
  const deadline = scope.getStore()?.deadline;
  if (deadline === undefined) return next(args);
  const left = deadline - Date.now();
  if (WRITES.has(String(context.commandName))) {
    // A write once sent may commit, so it is never abandoned at the deadline: a 503 then would have the caller retry
    // (and, its Idempotency-Key released, run again) a write that lands anyway. It is waited for, which the client's
    // request timeout bounds, so one starts only while that whole wait fits before the deadline (decisions §19). A
    // transaction's retry that no longer fits leaves its outcome unknown: the 503 says so, and a create's answer
    // commits with it (shared/idempotency), so the client's retry with its key finds it.
    if (left < DDB_TIMEOUTS.requestTimeout) throw resent ? unknownOutcomeError() : deadlineError();
    return next(args);
  }
  if (left <= 0) throw deadlineError();
  // Stop waiting for a read at the deadline: the caller gets its 503 before the function (and API Gateway) time out.
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([next(args), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(deadlineError()), left)))]);
  } finally {
    clearTimeout(timer);
  }
};
ddb.middlewareStack.addRelativeTo(attemptDeadline as never, { relation: 'after', toMiddleware: 'retryMiddleware', name: 'attemptDeadline' });
