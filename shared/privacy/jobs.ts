import { objectKeys } from '../attachments/keys.ts';
import type { Principal } from '../auth/principal.ts';
import { getContact } from '../contacts/service.ts';
import type { Job } from '../jobs/model.ts';
import { createJob } from '../jobs/service.ts';

/**
 * The API side of privacy's jobs (decisions §23): the requests that make an
 * erasure or a data export, and a completed export's download. What the jobs
 * do is their executors' (erasure.ts, data-export.ts), which the bulk-jobs
 * consumer loads; the jobs function never does.
 */

/** What an erasure job keeps to find the contact's data while it runs (the job expires 7 days after its creation). */
export interface ErasureInput {
  email: string;
  name: string;
}

/** POST /v1/contacts/{id}/erase: the job, queued (404 for a contact the account does not have). */
export async function createErasureJob(p: Principal, contactId: string, queueUrl: string): Promise<Job> {
  const c = await getContact(p, contactId);
  const input: ErasureInput = { email: c.email, name: c.name };
  return createJob(p, { type: 'erasure', ids: [contactId], input }, queueUrl);
}

/** POST /v1/contacts/{id}/data_export: the job, queued (404 for a contact the account does not have). */
export async function createDataExportJob(p: Principal, contactId: string, queueUrl: string): Promise<Job> {
  await getContact(p, contactId);
  return createJob(p, { type: 'data_export', ids: [contactId] }, queueUrl);
}

/** A job as GET /v1/jobs/{id} answers it: a completed data export with its document's download (a fresh URL on every read). */
export async function withDownload(p: Pick<Principal, 'accountId'>, job: Job): Promise<Job> {
  if (job.type !== 'data_export' || job.status !== 'completed' || job.succeeded !== 1) return job;
  // The S3 client and presigner load from their own chunk, for this answer only.
  const { presignExport } = await import('../attachments/privacy.ts');
  return { ...job, download: await presignExport(objectKeys.exportDocument(p.accountId, job.id)) };
}
