import { recordMetric } from '../observability.ts';

/**
 * One CloudWatch metric (namespace SupportDesk, dimension Stack), written at
 * once as an embedded-metric-format line through Powertools: Lambda's log
 * pipeline turns it into a metric, with no SDK call on the hot path. Off
 * outside Lambda.
 */
export function emitMetric(name: string, value: number, unit: 'Count' | 'Seconds' = 'Count'): void {
  recordMetric(name, value, unit);
}

/** Metric names the stack alarms on (infra/stack.ts). */
export const METRICS = {
  outboxAge: 'OutboxOldestPendingAgeSeconds',
  outboxParked: 'OutboxEventsParked',
  consumerFailures: 'ConsumerMessageFailures',
} as const;
