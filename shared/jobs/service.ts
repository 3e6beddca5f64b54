import { randomUUID } from 'node:crypto';
import * as z from '../zod.ts';
import type { Principal } from '../auth/principal.ts';
import { NotFoundError, ServiceUnavailableError } from '../domain/errors.ts';
import { sendMessage } from '../events/sqs.ts';
import { toHttpError } from '../http/error-map.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { correlationIdFrom, currentCorrelationId, withCorrelation } from '../observability.ts';
import type { Job, JobType } from './model.ts';
import * as repo from './repository.ts';
import type { JobRecord, StoredResult } from './repository.ts';
import { distinctIds, nextChunk, toJobDto, withResults } from './rules.ts';

/**
 * The job runner (decisions §16, §20), knowing no job type: a request writes
 * the job and queues its first step; the bulk-jobs consumer runs one step per
 * message with the executors it is given (functions/bulk-jobs/executors.ts):
 * it takes the job's lease, claims the next chunk of items (what the type's
 * `claim` reads of each, recorded before any runs), runs each item through the
 * type's `run`, records the chunk's results with the lease released, and
 * queues the next step. A step cut short (a crash, a timeout) leaves its
 * claims: the next one takes the same chunk and tells `run` that it resumes,
 * so an executor can skip what it already did.
 */

/** decisions §16: jobs are kept 7 days. */
const JOB_TTL_SECONDS = 7 * 24 * 60 * 60;
/** Items per step (per message), unless the type says otherwise: a step stays far inside the consumer's timeout. */
export const BULK_CHUNK = 25;
/** Items of a step run at once, unless the type says otherwise: each is a few reads and one transaction, mostly waiting on the store. */
const ITEMS_AT_ONCE = 5;
/** A step's hold on its job: longer than the consumer's timeout (60 s), so a lease outlives any invocation that holds it. */
export const LEASE_MS = 90_000;

/** An item's claim: what the executor's `claim` read before the chunk ran, and whether an earlier step (cut short) made it. */
export interface Claim {
  value: number;
  resumed: boolean;
}

/**
 * What a job type does with each of its items (a ticket id). An error `run`
 * throws is the item's result, as the API would answer it (code and message
 * of shared/http/error-map.ts), except the store being busy (503), which
 * fails the step for its retry. `run` answers 'unfinished' when it stopped
 * part-way on purpose (a long item done over several steps): the item keeps
 * no result and the next step runs it again.
 */
export interface JobExecutor {
  /** Items per step (default BULK_CHUNK). */
  chunkSize?: number;
  /** Items of a step run at once (default 5). */
  concurrency?: number;
  /**
   * Read, before the chunk runs, what the item's resumption needs (bulk: the
   * ticket's version; 0 when it is not found); recorded with the job. Without
   * it, `run` must be safe to run again on its own.
   */
  claim?: (job: JobRecord, itemId: string) => Promise<number>;
  run: (job: JobRecord, itemId: string, claim: Claim | null) => Promise<void | 'unfinished'>;
}

export type JobExecutors = Readonly<Record<JobType, JobExecutor>>;

/** A bulk-jobs queue message: run the job's next step. */
export const JobStepMessageSchema = z.object({ accountId: z.string().check(z.minLength(1)), jobId: z.string().check(z.minLength(1)) });
export type JobStepMessage = z.infer<typeof JobStepMessageSchema>;

/** Queue a step of a job; the account is the fair-queue group. */
export async function enqueueJobStep(queueUrl: string, msg: JobStepMessage): Promise<void> {
  await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify(msg), MessageGroupId: msg.accountId });
}

/** A job to make: its type, its items (ticket ids; duplicates count once) and what its executor applies to each. */
export interface JobRequest {
  type: JobType;
  ids: readonly string[];
  input?: unknown;
}

/**
 * Create a job and queue its first step (the request's only work: it counts
 * once against the rate limit). If the step cannot be queued the job is
 * removed and the caller may retry (503).
 */
export async function createJob(p: Principal, request: JobRequest, queueUrl: string): Promise<Job> {
  const job = await newJob(p, request);
  try {
    await enqueueJobStep(queueUrl, { accountId: p.accountId, jobId: job.id });
  } catch (err) {
    await repo.deleteJob(p.accountId, job.id).catch((e: unknown) => logger.error('job: could not remove a job that was never queued', { jobId: job.id, err: e }));
    throw new ServiceUnavailableError('The job could not be queued; retry shortly', 1, { cause: err });
  }
  return toJobDto(job);
}

/** Write a new job, queued, with no step queued yet (createJob queues its first). */
export async function newJob(p: Principal, request: JobRequest): Promise<JobRecord> {
  const now = new Date();
  const ids = distinctIds(request.ids);
  const job: JobRecord = {
    id: newId('job', now.getTime()),
    accountId: p.accountId,
    type: request.type,
    status: 'queued',
    ids,
    input: request.input ?? null,
    principal: { ...p },
    correlationId: currentCorrelationId() ?? null,
    results: ids.map(() => null),
    succeeded: 0,
    failed: 0,
    claims: {},
    leaseId: null,
    leaseUntil: 0,
    createdAt: now.toISOString(),
    completedAt: null,
    expiresAt: Math.floor(now.getTime() / 1000) + JOB_TTL_SECONDS,
  };
  await repo.putJob(job);
  return job;
}

/** A job of the caller's account (another account's is not found). */
export async function getJob(p: Pick<Principal, 'accountId'>, id: string): Promise<Job> {
  const job = await repo.getJob(p.accountId, id);
  if (!job) throw new NotFoundError('Job');
  return toJobDto(job);
}

export interface StepOptions {
  /** The executor of each job type. */
  executors: JobExecutors;
  /** Queue the job's next step (the consumer sends it back to its own queue). */
  next: (msg: JobStepMessage) => Promise<void>;
  /** Called as each item of the step gets its result, before the step records them (tests cut a step short here). */
  afterItem?: (itemId: string) => void | Promise<void>;
  chunkSize?: number;
}

export type StepOutcome = { state: 'gone' | 'finished' | 'busy' } | { state: 'progressed' | 'completed'; tickets: number; remaining: number };

/**
 * One step of a job: its next chunk of items, each run once, their results
 * recorded. A job that is gone or finished, or held by another step, is left
 * alone (that step's own message carries the job on). A step that fails lets
 * the job go with its claims kept, for the message's retry.
 */
export async function runJobStep(msg: JobStepMessage, opts: StepOptions): Promise<StepOutcome> {
  const leaseId = randomUUID();
  const job = await repo.takeLease(msg.accountId, msg.jobId, leaseId, Date.now(), LEASE_MS);
  if (!job) {
    const current = await repo.getJob(msg.accountId, msg.jobId);
    return { state: !current ? 'gone' : current.status === 'completed' ? 'finished' : 'busy' };
  }
  // The events of the job's changes carry the correlation id of the request that made it.
  return withCorrelation(correlationIdFrom(job.correlationId ?? undefined), async () => {
    try {
      const executor = opts.executors[job.type];
      if (!executor) throw new Error(`job ${job.id}: no executor for its type ${job.type}`);
      const chunk = nextChunk(job, opts.chunkSize ?? executor.chunkSize ?? BULK_CHUNK);
      const claims = await claim(job, executor, chunk, leaseId);
      const done = await runChunk(job, executor, chunk, claims, opts.afterItem);
      const after = withResults(job, done);
      const completedAt = after.complete ? new Date().toISOString() : null;
      if (!(await repo.recordChunk(job.accountId, job.id, leaseId, { ...after, completedAt }))) throw new Error(`job ${job.id}: lease lost before its results were recorded`);
      const remaining = after.results.filter((r) => !r).length;
      if (remaining) await opts.next(msg);
      return { state: completedAt ? 'completed' : 'progressed', tickets: chunk.length, remaining };
    } catch (err) {
      await repo.releaseLease(job.accountId, job.id, leaseId).catch((e: unknown) => logger.error('job: could not release the lease', { jobId: job.id, err: e }));
      throw err;
    }
  });
}

/** The chunk's claims: those an earlier step left, kept; the others read now and recorded before any item is run. None without the executor's `claim`. */
async function claim(job: JobRecord, executor: JobExecutor, chunk: number[], leaseId: string): Promise<Map<number, Claim>> {
  const read = executor.claim;
  if (!read) return new Map();
  const has = (at: number) => Object.hasOwn(job.claims, String(at));
  const fresh = chunk.filter((at) => !has(at));
  const values = await Promise.all(fresh.map((at) => read(job, job.ids[at])));
  const claims = new Map<number, Claim>(chunk.filter(has).map((at) => [at, { value: job.claims[String(at)], resumed: true }]));
  fresh.forEach((at, i) => claims.set(at, { value: values[i], resumed: false }));
  if (fresh.length) {
    const saved = Object.fromEntries([...claims].map(([at, c]) => [String(at), c.value]));
    if (!(await repo.saveClaims(job.accountId, job.id, leaseId, saved))) throw new Error(`job ${job.id}: lease lost before its claims were recorded`);
  }
  return claims;
}

/** Run the chunk's items, a few at a time; on a failure that is not an item's own, the ones under way finish and the step fails. */
async function runChunk(job: JobRecord, executor: JobExecutor, chunk: number[], claims: Map<number, Claim>, afterItem: StepOptions['afterItem']): Promise<Map<number, StoredResult>> {
  const results = new Map<number, StoredResult>();
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (!failures.length && next < chunk.length) {
      const at = chunk[next++];
      try {
        const result = await runOne(job, executor, job.ids[at], claims.get(at) ?? null);
        if (result) results.set(at, result);
        await afterItem?.(job.ids[at]);
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(executor.concurrency ?? ITEMS_AT_ONCE, chunk.length) }, worker));
  if (failures.length) throw failures[0];
  return results;
}

const OK: StoredResult = { status: 'ok' };

/** One item; its failure is its result; null when the executor left it unfinished for the next step. */
async function runOne(job: JobRecord, executor: JobExecutor, itemId: string, c: Claim | null): Promise<StoredResult | null> {
  try {
    return (await executor.run(job, itemId, c)) === 'unfinished' ? null : OK;
  } catch (err) {
    return failedResult(err);
  }
}

/**
 * An item's failure as the API would have answered it (code and message of
 * shared/http/error-map.ts). The store being busy is not the item's
 * failure: it fails the step, which is retried.
 */
function failedResult(err: unknown): StoredResult {
  const { status, body } = toHttpError(err, 'helpdesk');
  if (status === 503) throw err;
  if (status >= 500) logger.error('job: an item failed', { err });
  const { code, message } = (body as { error: { code: string; message: string } }).error;
  return { status: 'error', error: { code, message } };
}
