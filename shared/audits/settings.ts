import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** How long audits are kept (decisions §15; the stage's `auditRetentionDays`). */
export const auditSettings = defineSettings(
  'shared/audits/repository.ts',
  z.object({
    /** Days an audit is kept before DynamoDB's TTL removes it; the stage sets it on every function that writes audits. */
    AUDIT_RETENTION_DAYS: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(3650)), 365),
  }),
);
