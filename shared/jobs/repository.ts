import type { Principal } from '../auth/principal.ts';
import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { jobEntities } from '../db/entities/jobs.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { writeNow } from '../db/transact.ts';
import type { UpdateParts } from '../db/update.ts';
import type { JobResult, JobStatus, JobType } from './model.ts';

/** An item's result as the job keeps it (at the item's position in `ids`). */
export type StoredResult = Omit<JobResult, 'id'>;

/** A job as stored (one item, read whole by GET /v1/jobs/{id} and by each step of its consumer). */
export interface JobRecord {
  id: string;
  accountId: string;
  type: JobType;
  status: JobStatus;
  /** The distinct items (ticket ids), in the order given. */
  ids: string[];
  /** What the job type's executor applies to each item, as the request gave it (a bulk_update's change; null when there is nothing beside the ids). Stored as `change`. */
  input: unknown;
  /** The caller of the POST: each item is done as this caller's own request would do it. */
  principal: Principal;
  /** The POST's correlation id, carried by the events of every change the job makes. */
  correlationId: string | null;
  /** Each item's result, at its position in `ids`; null until it is done. Positions, not ids, key what the job keeps: an id is any string the caller sent. */
  results: (StoredResult | null)[];
  succeeded: number;
  failed: number;
  /** The chunk in progress, by position in `ids`: what the executor's claim read of each item before it ran (bulk: the ticket's version, 0: not found). */
  claims: Record<string, number>;
  leaseId: string | null;
  /** Epoch ms until which `leaseId` holds the job; 0 when no one does. */
  leaseUntil: number;
  createdAt: string;
  completedAt: string | null;
  /** Epoch seconds; DynamoDB's TTL removes the item, and reads treat it as gone from then on. */
  expiresAt: number;
}

const jobs = bindEntity<JobRecord>(jobEntities.job, {
  fields: [
    'id',
    'accountId',
    'type',
    'status',
    'ids',
    'input',
    'principal',
    'correlationId',
    'results',
    'succeeded',
    'failed',
    'claims',
    'leaseId',
    'leaseUntil',
    'createdAt',
    'completedAt',
    'expiresAt',
  ],
  renames: { type: 'jobType', input: 'change', expiresAt: TTL_ATTRIBUTE },
  normalize: (j) => ({ ...j, input: j.input ?? null, results: j.results ?? j.ids.map(() => null), claims: j.claims ?? {}, leaseUntil: Number(j.leaseUntil ?? 0) }),
});

const conditionFailed = (err: unknown) => (err as Error).name === 'ConditionalCheckFailedException';

/** Write a new job. */
export async function putJob(job: JobRecord): Promise<void> {
  await writeNow(jobs.put(job, conditions.absent()));
}

/** Remove a job that never started (its first message could not be queued). */
export async function deleteJob(accountId: string, id: string): Promise<void> {
  await writeNow(jobs.delete({ accountId, id }));
}

/** A job of the account (strongly consistent: a poll right after the POST sees the job it answered), or null once expired. */
export async function getJob(accountId: string, id: string, now = Date.now()): Promise<JobRecord | null> {
  const job = await jobs.get({ accountId, id }, { consistent: true });
  return job && job.expiresAt >= Math.floor(now / 1000) ? job : null;
}

/** An update of a job that holds only while the caller holds its lease; false when it does not. */
async function whileHeld(accountId: string, id: string, leaseId: string, parts: UpdateParts): Promise<boolean> {
  const held: Condition = { expr: 'leaseId = :lease', values: { ':lease': leaseId } };
  try {
    await writeNow(jobs.updateAttributes({ accountId, id }, parts, held));
    return true;
  } catch (err) {
    if (conditionFailed(err)) return false;
    throw err;
  }
}

/**
 * Take the job for one step: it exists, is not completed, and no one else's
 * lease is live. Answers the job as it now is (running, leased), or null.
 */
export async function takeLease(accountId: string, id: string, leaseId: string, now: number, leaseMs: number): Promise<JobRecord | null> {
  const take = jobs.updateAttributes(
    { accountId, id },
    { set: { leaseId, leaseUntil: now + leaseMs, status: 'running' } },
    { expr: 'attribute_exists(pk) AND #status <> :completed AND leaseUntil < :now', names: { '#status': 'status' }, values: { ':completed': 'completed', ':now': now } },
  );
  try {
    const item = await writeNow(take, { returnItem: true });
    return item ? jobs.fromItem(item) : null;
  } catch (err) {
    if (conditionFailed(err)) return null;
    throw err;
  }
}

/** Record the chunk's claims (what each item was before it is run). */
export const saveClaims = (accountId: string, id: string, leaseId: string, claims: Record<string, number>) => whileHeld(accountId, id, leaseId, { set: { claims } });

/** Record a chunk's results (every result so far, with the counts) and let the lease go; with `completedAt`, the job is completed. */
export const recordChunk = (accountId: string, id: string, leaseId: string, done: { results: (StoredResult | null)[]; succeeded: number; failed: number; completedAt: string | null }) =>
  whileHeld(accountId, id, leaseId, {
    set: {
      results: done.results,
      succeeded: done.succeeded,
      failed: done.failed,
      claims: {},
      leaseId: null,
      leaseUntil: 0,
      ...(done.completedAt ? { status: 'completed', completedAt: done.completedAt } : {}),
    },
  });

/** Let the lease go without recording anything (a step that failed part-way; its claims stay for the next one). */
export const releaseLease = (accountId: string, id: string, leaseId: string) => whileHeld(accountId, id, leaseId, { set: { leaseId: null, leaseUntil: 0 } });
