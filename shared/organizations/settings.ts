import * as z from 'zod';
import { defineSettings } from '../config/settings.ts';

/** The company-data provider (shared/organizations/enrichment.ts), at the first lookup. */
export const enrichmentSettings = defineSettings(
  'shared/organizations/enrichment.ts',
  z
    .object({
      /** Unset or `none`: company fields stay null. */
      ENRICHMENT_PROVIDER: z.enum(['http', 'file', 'none']).optional(),
      ENRICHMENT_URL: z.url().optional(),
      /** Deployed: the provider's key stays in Secrets Manager, read through the extension. */
      ENRICHMENT_API_KEY_SECRET_ID: z.string().min(1).optional(),
      /** Locally the key may be given directly. */
      ENRICHMENT_API_KEY: z.string().min(1).optional(),
      ENRICHMENT_TIMEOUT_MS: z.coerce.number().int().positive().default(3000),
      /** JSON object keyed by domain (ENRICHMENT_PROVIDER=file). */
      ENRICHMENT_FILE: z.string().min(1).optional(),
    })
    .superRefine((e, ctx) => {
      if (e.ENRICHMENT_PROVIDER === 'http' && !e.ENRICHMENT_URL) ctx.addIssue({ code: 'custom', path: ['ENRICHMENT_URL'], message: 'ENRICHMENT_URL is required with ENRICHMENT_PROVIDER=http' });
      if (e.ENRICHMENT_PROVIDER === 'file' && !e.ENRICHMENT_FILE) ctx.addIssue({ code: 'custom', path: ['ENRICHMENT_FILE'], message: 'ENRICHMENT_FILE is required with ENRICHMENT_PROVIDER=file' });
    }),
);
