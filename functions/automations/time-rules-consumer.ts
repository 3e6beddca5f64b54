import { consumeTimeRuleBatches } from '#shared/automations/time-rules.ts';

/** SQS consumer of the hourly time-rule batches. */
export const handler = consumeTimeRuleBatches;
