import * as z from 'zod';
import { defineSettings } from '../config/settings.ts';

/** What the DynamoDB client reads (shared/db/client.ts), at load. */
export const dbSettings = defineSettings(
  'shared/db/client.ts',
  z.object({
    TABLE_NAME: z.string().min(1),
    /** Set by Lambda itself; the local stack sets it too. */
    AWS_REGION: z.string().min(1),
    /** Only the local stack sets it (DynamoDB Local). */
    DYNAMODB_ENDPOINT: z.url().optional(),
  }),
);
