import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** The company-data provider (shared/organizations/enrichment.ts), at the first lookup. */
export const enrichmentSettings = defineSettings(
  'shared/organizations/enrichment.ts',
  z
    .object({
      /** Unset or `none`: company fields stay null. */
      ENRICHMENT_PROVIDER: z.optional(z.enum(['http', 'file', 'none'])),
      ENRICHMENT_URL: z.optional(z.url()),
      /** Deployed: the provider's key stays in Secrets Manager, read through the extension. */
      ENRICHMENT_API_KEY_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
      /** Locally the key may be given directly. */
      ENRICHMENT_API_KEY: z.optional(z.string().check(z.minLength(1))),
      ENRICHMENT_TIMEOUT_MS: z._default(z.coerce.number().check(z.int(), z.positive()), 3000),
      /** JSON object keyed by domain (ENRICHMENT_PROVIDER=file). */
      ENRICHMENT_FILE: z.optional(z.string().check(z.minLength(1))),
    })
    .check(
      z.superRefine((e, ctx) => {
        if (e.ENRICHMENT_PROVIDER === 'http' && !e.ENRICHMENT_URL) ctx.addIssue({ code: 'custom', path: ['ENRICHMENT_URL'], message: 'ENRICHMENT_URL is required with ENRICHMENT_PROVIDER=http' });
        if (e.ENRICHMENT_PROVIDER === 'file' && !e.ENRICHMENT_FILE) ctx.addIssue({ code: 'custom', path: ['ENRICHMENT_FILE'], message: 'ENRICHMENT_FILE is required with ENRICHMENT_PROVIDER=file' });
      }),
    ),
);
