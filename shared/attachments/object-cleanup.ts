import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { bucket, deleteObjects, s3 } from './s3.ts';

/**
 * Delete every object under a prefix (a deleted ticket's attachments), 1,000
 * keys per listing and per delete. Idempotent: an empty prefix costs one
 * listing. (The CDK app grants listing and deleting under `attachments/` to
 * the functions whose bundle holds this module, and nothing else.)
 */
export async function deleteUnderPrefix(prefix: string): Promise<number> {
  let deleted = 0;
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key ? [o.Key] : []));
    if (keys.length) await deleteObjects(keys);
    deleted += keys.length;
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return deleted;
}
