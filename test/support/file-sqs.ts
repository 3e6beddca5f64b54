/**
 * This test file's own SQS/S3 emulator (fauxqs), started by setup-env.ts
 * before the file runs, with the template's queues and buckets. Each file has
 * its own so that files can run side by side: one file's consumers never take
 * another file's messages. DynamoDB Local stays shared; files isolate there by
 * account.
 */
let endpoint: string | undefined;

export const setFileSqsEndpoint = (e: string) => {
  endpoint = e;
};

/** The endpoint of this file's queues and buckets. */
export function fileSqsEndpoint(): string {
  if (!endpoint) throw new Error('the file SQS emulator is started by test/support/setup-env.ts');
  return endpoint;
}
