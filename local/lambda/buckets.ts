import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { Deployment } from './deployment.ts';

/**
 * Create the template's buckets in the S3 emulator (fauxqs serves S3 on its
 * SQS endpoint), by their local names (local/lambda/deployment.ts). Creating
 * a bucket that exists is a no-op, so a restart on persisted objects keeps them.
 */
export async function createLocalBuckets(endpoint: string, d: Deployment, region: string): Promise<void> {
  const s3 = new S3Client({ region, endpoint, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    for (const name of d.buckets.values()) {
      try {
        await s3.send(new CreateBucketCommand({ Bucket: name }));
      } catch (err) {
        if ((err as Error).name !== 'BucketAlreadyOwnedByYou' && (err as Error).name !== 'BucketAlreadyExists') throw err;
      }
    }
  } finally {
    s3.destroy();
  }
}
