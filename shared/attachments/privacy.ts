import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { URL_TTL_SECONDS } from './keys.ts';
import { bucket, callBudget, deleteObjects, s3 } from './s3.ts';

/**
 * What privacy (decisions §23) does with objects (the records' writes are in
 * redaction.ts, which loads no S3 client): a redacted attachment's object
 * deleted, an erased contact's attachments and stored raw mail deleted, and a person's data
 * written as one JSON document under `exports/` with a presigned download.
 * (The CDK app grants what this module does to the functions whose bundle
 * holds it: delete under `attachments/` and `inbound/`, put and get under
 * `exports/`.)
 */

/** Delete objects of the bucket (attachments, raw mail); a key with no object counts as deleted, so a retry is harmless. */
export const deleteFiles = (keys: readonly string[]): Promise<void> => (keys.length ? deleteObjects(keys) : Promise.resolve());

/** Write a person's data document. */
export async function putExportDocument(key: string, body: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: 'application/json', ContentDisposition: 'attachment; filename="personal-data.json"' }), callBudget());
}

/** A presigned GET of a person's data document, valid 15 minutes (as attachments' URLs). */
export async function presignExport(key: string): Promise<{ url: string; expiresAt: string }> {
  const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: URL_TTL_SECONDS });
  return { url, expiresAt: new Date(Date.now() + URL_TTL_SECONDS * 1000).toISOString() };
}

/** A part of a person's data document written by an earlier step (the steps' parts are joined by the last). */
export async function readExportPart(key: string): Promise<string> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), callBudget());
  return out.Body!.transformToString();
}
