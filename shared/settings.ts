import * as z from './zod.ts';
import { defineSettings } from './config/settings.ts';

/** Logging and metrics (shared/observability.ts), at load. */
export const observabilitySettings = defineSettings(
  'shared/observability.ts',
  z.object({
    /** Set by Lambda itself: metrics are on only there. */
    AWS_LAMBDA_FUNCTION_NAME: z.optional(z.string().check(z.minLength(1))),
    /** Powertools' levels, any case (`silent` under tests and the bench). */
    LOG_LEVEL: z._default(z.pipe(z.string().check(z.toUpperCase()), z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'])), 'INFO'),
    /** The metrics' Stack dimension (the CDK app sets the stack name). */
    STACK_NAME: z._default(z.string().check(z.minLength(1)), 'local'),
  }),
);
