import { randomUUID } from 'node:crypto';
import * as z from 'zod';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { ticketAuditsAfter } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import { NotFoundError, ServiceUnavailableError } from '../domain/errors.ts';
import { sqs } from '../events/sqs.ts';
import { toHttpError } from '../http/error-map.ts';
import { newId } from '../ids.ts';
import { logger } from '../logger.ts';
import { correlationIdFrom, currentCorrelationId, withCorrelation } from '../observability.ts';
import { deleteTicket, findTicket, updateTicket } from '../tickets/service.ts';
import type { BulkTicketChange, Job } from './model.ts';
import * as repo from './repository.ts';
import type { JobRecord, StoredResult } from './repository.ts';
import { changedByJob, distinctIds, nextChunk, ticketEdit, toJobDto, withResults } from './rules.ts';

/**
 * Bulk jobs (decisions §16). The POST writes the job and queues its first
 * step; the bulk-jobs consumer runs one step per message: it takes the job's
 * lease, claims the next chunk of tickets (the version each has before it),
 * changes each ticket through the ticket service as its own PUT or DELETE,
 * records the chunk's results with the lease released, and queues the next
 * step. A step cut short (a crash, a timeout) leaves its claims: the next one
 * takes the same chunk and skips each ticket whose audits show this job's
 * change after the claimed version, so no ticket is changed twice.
 */

/** decisions §16: jobs are kept 7 days. */
const JOB_TTL_SECONDS = 7 * 24 * 60 * 60;
/** Tickets per step (per message): a step stays far inside the consumer's timeout. */
export const BULK_CHUNK = 25;
/** Tickets of a step changed at once: each is a few reads and one transaction, mostly waiting on the store. */
const TICKETS_AT_ONCE = 5;
/** A step's hold on its job: longer than the consumer's timeout (60 s), so a lease outlives any invocation that holds it. */
export const LEASE_MS = 90_000;

/** A bulk-jobs queue message: run the job's next step. */
export const BulkJobMessageSchema = z.object({ accountId: z.string().min(1), jobId: z.string().min(1) });
export type BulkJobMessage = z.infer<typeof BulkJobMessageSchema>;

/** Queue a step of a job; the account is the fair-queue group. */
export async function enqueueBulkStep(queueUrl: string, msg: BulkJobMessage): Promise<void> {
  await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: JSON.stringify(msg), MessageGroupId: msg.accountId }));
}

export type BulkRequest = { type: 'bulk_update'; ids: string[]; change: BulkTicketChange } | { type: 'bulk_delete'; ids: string[] };

/**
 * Create a job and queue its first step (the request's only work: it counts
 * once against the rate limit). If the step cannot be queued the job is
 * removed and the caller may retry (503).
 */
export async function createBulkJob(p: Principal, request: BulkRequest, queueUrl: string): Promise<Job> {
  const job = await newBulkJob(p, request);
  try {
    await enqueueBulkStep(queueUrl, { accountId: p.accountId, jobId: job.id });
  } catch (err) {
    await repo.deleteJob(p.accountId, job.id).catch((e: unknown) => logger.error('bulk job: could not remove a job that was never queued', { jobId: job.id, err: e }));
    throw new ServiceUnavailableError('The job could not be queued; retry shortly', 1, { cause: err });
  }
  return toJobDto(job);
}

/** Write a new job, queued, with no step queued yet (createBulkJob queues its first). */
export async function newBulkJob(p: Principal, request: BulkRequest): Promise<JobRecord> {
  const now = new Date();
  const ids = distinctIds(request.ids);
  const job: JobRecord = {
    id: newId('job', now.getTime()),
    accountId: p.accountId,
    type: request.type,
    status: 'queued',
    ids,
    change: request.type === 'bulk_update' ? request.change : null,
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
  /** Queue the job's next step (the consumer sends it back to its own queue). */
  next: (msg: BulkJobMessage) => Promise<void>;
  /** Called as each ticket of the step gets its result, before the step records them (tests cut a step short here). */
  afterTicket?: (ticketId: string) => void | Promise<void>;
  chunkSize?: number;
}

export type StepOutcome = { state: 'gone' | 'finished' | 'busy' } | { state: 'progressed' | 'completed'; tickets: number; remaining: number };

/**
 * One step of a job: its next chunk of tickets, each changed once, their
 * results recorded. A job that is gone or finished, or held by another
 * step, is left alone (that step's own message carries the job on). A step
 * that fails lets the job go with its claims kept, for the message's retry.
 */
export async function runBulkStep(msg: BulkJobMessage, opts: StepOptions): Promise<StepOutcome> {
  const leaseId = randomUUID();
  const job = await repo.takeLease(msg.accountId, msg.jobId, leaseId, Date.now(), LEASE_MS);
  if (!job) {
    const current = await repo.getJob(msg.accountId, msg.jobId);
    return { state: !current ? 'gone' : current.status === 'completed' ? 'finished' : 'busy' };
  }
  // The ticket events of the job carry the correlation id of the request that made it.
  return withCorrelation(correlationIdFrom(job.correlationId ?? undefined), async () => {
    try {
      const chunk = nextChunk(job, opts.chunkSize ?? BULK_CHUNK);
      const claims = await claim(job, chunk, leaseId);
      const done = await runChunk(job, chunk, claims, opts.afterTicket);
      const after = withResults(job, done);
      const completedAt = after.complete ? new Date().toISOString() : null;
      if (!(await repo.recordChunk(job.accountId, job.id, leaseId, { ...after, completedAt }))) throw new Error(`bulk job ${job.id}: lease lost before its results were recorded`);
      const remaining = after.results.filter((r) => !r).length;
      if (remaining) await opts.next(msg);
      return { state: completedAt ? 'completed' : 'progressed', tickets: chunk.length, remaining };
    } catch (err) {
      await repo.releaseLease(job.accountId, job.id, leaseId).catch((e: unknown) => logger.error('bulk job: could not release the lease', { jobId: job.id, err: e }));
      throw err;
    }
  });
}

/** A ticket's claim: the version it had before the chunk, and whether an earlier step (cut short) made it. */
interface Claim {
  version: number;
  resumed: boolean;
}

/** The chunk's claims: those an earlier step left, kept; the others read now and recorded before any ticket is changed. */
async function claim(job: JobRecord, chunk: number[], leaseId: string): Promise<Map<number, Claim>> {
  const has = (at: number) => Object.hasOwn(job.claims, String(at));
  const fresh = chunk.filter((at) => !has(at));
  const read = await Promise.all(fresh.map((at) => findTicket(job.accountId, job.ids[at])));
  const claims = new Map<number, Claim>(chunk.filter(has).map((at) => [at, { version: job.claims[String(at)], resumed: true }]));
  fresh.forEach((at, i) => claims.set(at, { version: read[i]?.version ?? 0, resumed: false }));
  if (fresh.length) {
    const saved = Object.fromEntries([...claims].map(([at, c]) => [String(at), c.version]));
    if (!(await repo.saveClaims(job.accountId, job.id, leaseId, saved))) throw new Error(`bulk job ${job.id}: lease lost before its claims were recorded`);
  }
  return claims;
}

/** Change the chunk's tickets, a few at a time; on a failure that is not a ticket's own, the ones under way finish and the step fails. */
async function runChunk(job: JobRecord, chunk: number[], claims: Map<number, Claim>, afterTicket: StepOptions['afterTicket']): Promise<Map<number, StoredResult>> {
  const results = new Map<number, StoredResult>();
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (!failures.length && next < chunk.length) {
      const at = chunk[next++];
      try {
        results.set(at, await changeOne(job, job.ids[at], claims.get(at)!));
        await afterTicket?.(job.ids[at]);
      } catch (err) {
        failures.push(err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(TICKETS_AT_ONCE, chunk.length) }, worker));
  if (failures.length) throw failures[0];
  return results;
}

const OK: StoredResult = { status: 'ok' };

/** One ticket, as a single PUT or DELETE by the job's caller would change it; its failure is its result. */
async function changeOne(job: JobRecord, ticketId: string, c: Claim): Promise<StoredResult> {
  try {
    if (c.resumed && changedByJob(c.version, await ticketAuditsAfter(job.accountId, ticketId, c.version), job.principal.userId)) return OK;
    if (job.type === 'bulk_update') await updateTicket(job.principal, ticketId, ticketEdit(job.change!), { via: 'bulk' });
    else await deleteTicket(job.principal, ticketId, { via: 'bulk' });
    return OK;
  } catch (err) {
    return failedResult(err);
  }
}

/**
 * A ticket's failure as the API would have answered it (code and message of
 * shared/http/error-map.ts). The store being busy is not the ticket's
 * failure: it fails the step, which is retried.
 */
function failedResult(err: unknown): StoredResult {
  const { status, body } = toHttpError(err, 'helpdesk');
  if (status === 503) throw err;
  if (status >= 500) logger.error('bulk job: a ticket failed', { err });
  const { code, message } = (body as { error: { code: string; message: string } }).error;
  return { status: 'error', error: { code, message } };
}
