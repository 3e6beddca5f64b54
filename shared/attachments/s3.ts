import { DeleteObjectsCommand, S3Client } from '@aws-sdk/client-s3';
import { injectFaults } from '../faults/inject.ts';
import { withoutSdkLogger } from '../sdk-client.ts';
import { objectStoreSettings } from './settings.ts';

const { AWS_REGION, UPLOADS_BUCKET, AWS_ENDPOINT_URL_S3, UPLOADS_MALWARE_SCAN } = objectStoreSettings();

/** The bucket of uploads (`uploads/…`) and attachments (`attachments/…`). */
export const bucket = UPLOADS_BUCKET;

/** Whether GuardDuty Malware Protection tags uploads, so that only clean ones may be attached. */
export const malwareScan = UPLOADS_MALWARE_SCAN;

/**
 * Per-attempt limits. A copy of a 25 MiB object is server-side and answers
 * within seconds; an attempt that takes longer fails (throwOnRequestTimeout:
 * without it the SDK only logs a warning and goes on waiting) and is retried.
 */
export const S3_TIMEOUTS = { connectionTimeout: 3_000, requestTimeout: 15_000, throwOnRequestTimeout: true } as const;

/**
 * The one S3 client of a process, created at module load. Against an
 * emulator (AWS_ENDPOINT_URL_S3, e.g. 127.0.0.1) it must address buckets by
 * path (no `<bucket>.127.0.0.1` host), so presigned URLs
 * point at the emulator the same way. Checksums are computed only where S3
 * requires them: a presigned PUT must not carry the checksum of an empty body.
 */
export const s3 = withoutSdkLogger(
  new S3Client({
    region: AWS_REGION,
    ...(AWS_ENDPOINT_URL_S3 ? { endpoint: AWS_ENDPOINT_URL_S3 } : {}),
    forcePathStyle: Boolean(AWS_ENDPOINT_URL_S3),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 3,
    requestHandler: { ...S3_TIMEOUTS },
  }),
);
injectFaults(s3, 's3', { requestTimeoutMs: S3_TIMEOUTS.requestTimeout });

/**
 * The longest an API request waits for one S3 call, retries included: a
 * HeadObject and a copy of 25 MiB answer well within it, and two of them stay
 * inside the request's 20 s deadline, so a struggling S3 is a 503 (AbortError)
 * the client can retry, never a function timeout.
 */
export const S3_CALL_TIMEOUT_MS = 8_000;
export const callBudget = () => ({ abortSignal: AbortSignal.timeout(S3_CALL_TIMEOUT_MS) });

/** Whether an S3 error means "no such object" (HeadObject answers a bare 404, GetObjectTagging NoSuchKey). */
export const isMissingObject = (err: unknown): boolean => {
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NotFound' || e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
};

/** Delete objects by key (up to 1,000 per request; a key with no object counts as deleted). */
export async function deleteObjects(keys: readonly string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000) {
    const chunk = keys.slice(i, i + 1000);
    const out = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: chunk.map((Key) => ({ Key })), Quiet: true } }));
    if (out.Errors?.length) throw new Error(`S3 refused to delete ${out.Errors.length} object(s): ${out.Errors[0].Code} ${out.Errors[0].Message}`);
  }
}
