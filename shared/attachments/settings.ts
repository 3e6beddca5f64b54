import * as z from '../zod.ts';
import { defineSettings, flag } from '../config/settings.ts';

/** The S3 client of uploads and attachments (shared/attachments/s3.ts), at load. */
export const objectStoreSettings = defineSettings(
  'shared/attachments/s3.ts',
  z.object({
    /** Set by Lambda itself; the local stack sets it too. */
    AWS_REGION: z.string().check(z.minLength(1)),
    /** The stack's one bucket of uploads and attachments. */
    UPLOADS_BUCKET: z.string().check(z.minLength(3), z.maxLength(63)),
    /** The SDK's own endpoint override; only the local stack sets it (the S3 emulator). Presigned URLs point there too. */
    AWS_ENDPOINT_URL_S3: z.optional(z.url()),
    /** GuardDuty Malware Protection scans the upload prefix (stage setting `uploads.malwareProtection`): only objects tagged clean can be attached. */
    UPLOADS_MALWARE_SCAN: flag,
  }),
);
