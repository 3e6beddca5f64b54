import * as z from 'zod';
import { defineSettings } from '../config/settings.ts';

/** Where the session secret comes from (shared/auth/secret.ts), read at the first token or cursor signed or verified. */
export const sessionSecretSettings = defineSettings(
  'shared/auth/secret.ts',
  z
    .object({
      /** Local stack: the HS256 secret itself. */
      SESSION_SECRET: z.string().min(32).optional(),
      /** Local stack and tests: the key before the last rotation, still accepted when verifying. */
      SESSION_SECRET_PREVIOUS: z.string().min(32).optional(),
      /** Deployed stack: the Secrets Manager secret that holds it. */
      SESSION_SECRET_ARN: z.string().min(1).optional(),
    })
    .refine((e) => e.SESSION_SECRET || e.SESSION_SECRET_ARN, { path: ['SESSION_SECRET_ARN'], message: 'SESSION_SECRET_ARN is required, or SESSION_SECRET locally' }),
);
