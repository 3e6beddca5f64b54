import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** What the DynamoDB client reads (shared/db/client.ts), at load. */
export const dbSettings = defineSettings(
  'shared/db/client.ts',
  z.object({
    TABLE_NAME: z.string().check(z.minLength(1)),
    /** Set by Lambda itself; the local stack sets it too. */
    AWS_REGION: z.string().check(z.minLength(1)),
    /** Only the local stack sets it (DynamoDB Local). */
    DYNAMODB_ENDPOINT: z.optional(z.url()),
    /**
     * Each attempt's request timeout (ms). No deployed template sets it; the
     * fault tests run their functions with a shorter one, so an injected hang
     * (which waits out exactly this timeout) costs them less time.
     */
    DYNAMODB_REQUEST_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.gte(100), z.lte(5_000)), 5_000),
  }),
);
