import { configuredBus } from '#shared/events/bus.ts';
import { METRICS } from '#shared/metrics.ts';
import { logger } from '#shared/logger.ts';
import { recordMetric } from '#shared/observability.ts';
import { oldestPendingAgeSeconds, sweepOutbox } from '#shared/events/sweeper.ts';
import { sweeperSettings } from './settings.ts';

const bus = await configuredBus();
const { OUTBOX_SWEEP_AGE_SECONDS } = sweeperSettings();

/**
 * What an operator may pass when invoking the sweeper by hand (`aws lambda
 * invoke`), beside the schedule's own event: sweep now (`olderThanSeconds: 0`)
 * and only some accounts' events. The local stack's tests use the same, as
 * they share one table between files.
 */
interface SweepRequest {
  olderThanSeconds?: unknown;
  accountIds?: unknown;
}

/**
 * Scheduled (every minute): publishes outbox items the stream path left
 * behind (parking those the bus refuses for good), then reports the age of
 * the oldest one still pending as a metric (CloudWatch embedded metric
 * format) for the outbox-age alarm.
 */
export const handler = async (event: SweepRequest = {}): Promise<{ published: number; parked: number; unpublished: number }> => {
  const accounts = Array.isArray(event.accountIds) ? new Set(event.accountIds) : undefined;
  const olderThanSeconds = typeof event.olderThanSeconds === 'number' && event.olderThanSeconds >= 0 ? event.olderThanSeconds : OUTBOX_SWEEP_AGE_SECONDS;
  const result = await sweepOutbox(bus, { olderThanSeconds, filter: accounts && ((r) => accounts.has(r.accountId)) });
  // The age is read after the sweep; a store too busy to answer leaves one data point out (the alarm reads several), not the sweep failed.
  const age = await oldestPendingAgeSeconds().catch((err) => logger.warn('outbox sweep: could not read the oldest pending age', { err }));
  if (age !== undefined) recordMetric(METRICS.outboxAge, age, 'Seconds');
  return result;
};
