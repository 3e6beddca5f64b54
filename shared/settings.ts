import * as z from 'zod';
import { defineSettings } from './config/settings.ts';

/** Logging and metrics (shared/observability.ts), at load. */
export const observabilitySettings = defineSettings(
  'shared/observability.ts',
  z.object({
    /** Set by Lambda itself: metrics are on only there. */
    AWS_LAMBDA_FUNCTION_NAME: z.string().min(1).optional(),
    /** Powertools' levels, any case (`silent` under tests and the bench). */
    LOG_LEVEL: z
      .string()
      .toUpperCase()
      .pipe(z.enum(['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT']))
      .default('INFO'),
    /** The metrics' Stack dimension (the CDK app sets the stack name). */
    STACK_NAME: z.string().min(1).default('local'),
  }),
);
