/**
 * One CloudWatch metric as an embedded-metric-format log line (namespace
 * SupportDesk, no dimensions): Lambda's log pipeline turns it into a metric,
 * with no SDK call on the hot path. Quiet under LOG_LEVEL=silent (tests).
 */
export function emitMetric(name: string, value: number, unit: 'Count' | 'Seconds' = 'Count'): void {
  if (process.env.LOG_LEVEL === 'silent') return;
  console.log(JSON.stringify({ _aws: { Timestamp: Date.now(), CloudWatchMetrics: [{ Namespace: 'SupportDesk', Dimensions: [[]], Metrics: [{ Name: name, Unit: unit }] }] }, [name]: value }));
}

/** Metric names the stack alarms on (infra/stack.ts). */
export const METRICS = {
  outboxAge: 'OutboxOldestPendingAgeSeconds',
  outboxParked: 'OutboxEventsParked',
  consumerFailures: 'ConsumerMessageFailures',
} as const;
