import { CopyObjectCommand, GetObjectCommand, GetObjectTaggingCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { contentDisposition, URL_TTL_SECONDS } from './keys.ts';
import { bucket, callBudget, isMissingObject, malwareScan, s3 } from './s3.ts';

// What attachments/service.ts uses of the client's module, so one dynamic import brings it.
export { deleteObjects, isMissingObject } from './s3.ts';

/**
 * The objects of uploads and attachments, as the messages function uses
 * them: presigned PUTs and GETs, HeadObject, the copy an attachment makes,
 * and deleting its own copies. (The CDK app grants read and write on the
 * bucket to the functions whose bundle holds this module.)
 */

/** The headers a presigned upload is signed with, and so must carry exactly (Content-Length is signed too: exactly `size` bytes). */
export const uploadHeaders = (name: string, contentType: string) => ({ 'Content-Type': contentType, 'Content-Disposition': contentDisposition(name) });

/** A presigned PUT of exactly `size` bytes of `contentType` to `key`, valid 15 minutes; the object keeps its download disposition. */
export function presignUpload(key: string, name: string, size: number, contentType: string): Promise<string> {
  const command = new PutObjectCommand({ Bucket: bucket, Key: key, ContentType: contentType, ContentLength: size, ContentDisposition: contentDisposition(name) });
  return getSignedUrl(s3, command, { expiresIn: URL_TTL_SECONDS, signableHeaders: new Set(['content-type', 'content-length', 'content-disposition']) });
}

/**
 * A presigned GET, valid 15 minutes. It downloads as a file because the
 * attachment's object is stored with an `attachment` disposition and the
 * declared type (copyObject), so the URL needs no response-* parameters
 * (which a long file name would make long, and an emulator ignores).
 */
export function presignDownload(key: string): Promise<string> {
  return getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: URL_TTL_SECONDS });
}

/** The stored size of an object, or undefined when nothing is stored under the key (HeadObject: never the client's word). */
export async function storedSize(key: string): Promise<number | undefined> {
  try {
    const out = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: key }), callBudget());
    return out.ContentLength ?? 0;
  } catch (err) {
    if (isMissingObject(err)) return undefined;
    throw err;
  }
}

/** GuardDuty Malware Protection's verdict on an object (its `GuardDutyMalwareScanStatus` tag), when the stage scans uploads. */
export const SCAN_STATUS_TAG = 'GuardDutyMalwareScanStatus';
export const SCAN_CLEAN = 'NO_THREATS_FOUND';
export async function scanStatus(key: string): Promise<string | undefined> {
  if (!malwareScan) return SCAN_CLEAN;
  try {
    const out = await s3.send(new GetObjectTaggingCommand({ Bucket: bucket, Key: key }), callBudget());
    return out.TagSet?.find((t) => t.Key === SCAN_STATUS_TAG)?.Value;
  } catch (err) {
    if (isMissingObject(err)) return undefined;
    throw err;
  }
}

/**
 * Server-side copy (the bytes never pass through the function; tags, such as
 * GuardDuty's verdict, go along). The copy is stored with the declared type
 * and an `attachment` disposition whatever the upload carried, so a download
 * is a file even where a GET's response-* parameters are ignored (the local
 * emulator, which also takes an upload without its signed headers).
 */
export async function copyObject(from: string, to: string, name: string, contentType: string): Promise<void> {
  await s3.send(
    new CopyObjectCommand({
      Bucket: bucket,
      Key: to,
      CopySource: `${bucket}/${encodeURIComponent(from).replace(/%2F/g, '/')}`,
      MetadataDirective: 'REPLACE',
      ContentType: contentType,
      ContentDisposition: contentDisposition(name),
    }),
    callBudget(),
  );
}

/** Store bytes the service itself received (an inbound mail's attachment, decisions §17) with the download headers a copy gets. */
export async function putObject(key: string, body: Uint8Array, name: string, contentType: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, ContentDisposition: contentDisposition(name) }), callBudget());
}

/** An object's bytes (an inbound mail's raw MIME, which the receipt rule stored). */
export async function readObject(key: string): Promise<Uint8Array> {
  const out = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }), callBudget());
  return out.Body!.transformToByteArray();
}
