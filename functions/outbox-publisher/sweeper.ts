import { configuredBus } from '#shared/events/bus.ts';
import { pipelineEnv } from '#shared/events/env.ts';
import { emitMetric, METRICS } from '#shared/events/metrics.ts';
import { oldestPendingAgeSeconds, sweepOutbox } from '#shared/events/publisher.ts';

const bus = await configuredBus();
const { OUTBOX_SWEEP_AGE_SECONDS } = pipelineEnv();

/**
 * Scheduled (every minute): publishes outbox items the stream path left
 * behind (parking those the bus refuses for good), then reports the age of
 * the oldest one still pending as a metric (CloudWatch embedded metric
 * format) for the outbox-age alarm.
 */
export const handler = async (): Promise<{ published: number; parked: number; unpublished: number }> => {
  const result = await sweepOutbox(bus, { olderThanSeconds: OUTBOX_SWEEP_AGE_SECONDS });
  emitMetric(METRICS.outboxAge, await oldestPendingAgeSeconds(), 'Seconds');
  return result;
};
