/**
 * The SQS/S3 emulator (fauxqs) of this test worker, started by setup-env.ts
 * before its first file runs, with the template's queues and buckets, and
 * emptied after each file. Each worker has its own so that two files can run
 * side by side: one file's consumers never take another file's messages.
 * DynamoDB Local stays shared; files isolate there by account.
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
