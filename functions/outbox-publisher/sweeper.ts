import { configuredBus } from '../../shared/events/bus.ts';
import { pipelineEnv } from '../../shared/events/env.ts';
import { oldestPendingAgeSeconds, sweepOutbox } from '../../shared/events/publisher.ts';

const bus = await configuredBus();
const { OUTBOX_SWEEP_AGE_SECONDS } = pipelineEnv();

/**
 * Scheduled (every minute): publishes outbox items the stream path left
 * behind, then reports the age of the oldest one still pending as a metric
 * (CloudWatch embedded metric format) for the outbox-age alarm.
 */
export const handler = async (): Promise<{ published: number; unpublished: number }> => {
  const result = await sweepOutbox(bus, { olderThanSeconds: OUTBOX_SWEEP_AGE_SECONDS });
  const age = await oldestPendingAgeSeconds();
  console.log(
    JSON.stringify({
      // Dimensioned by stack: two stages in one account must not read each other's outbox age.
      _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: 'SupportDesk', Dimensions: [['Stack']], Metrics: [{ Name: 'OutboxOldestPendingAgeSeconds', Unit: 'Seconds' }] }] },
      Stack: process.env.STACK_NAME ?? 'local',
      OutboxOldestPendingAgeSeconds: age,
    }),
  );
  return result;
};
