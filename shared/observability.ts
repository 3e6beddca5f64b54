import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import type { MetricName } from './metrics.ts';
import { SERVICE_NAME } from './service.ts';
import { observabilitySettings } from './settings.ts';

/**
 * One logger and one metrics per process (Powertools for AWS Lambda). In
 * Lambda every log line carries the function name, the cold-start flag
 * (injectLambdaContext) and the correlation id of the request or event being
 * handled; metrics are CloudWatch EMF, dimensioned by stack. Traces are
 * Lambda's own (active tracing): no X-Ray SDK in the bundles, whose weight
 * in every cold start and async hook on every promise cost more than the
 * per-call subsegments it added (docs/performance.md, "Cold start").
 */
const serviceName = SERVICE_NAME;
const { AWS_LAMBDA_FUNCTION_NAME, LOG_LEVEL, STACK_NAME } = observabilitySettings();
const inLambda = Boolean(AWS_LAMBDA_FUNCTION_NAME);
// Outside Lambda (local stack, tests, admin CLI) EMF lines would only clutter the console. Powertools reads
// this variable itself, so it is set here rather than read.
if (!inLambda) process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

/** Powertools' logger; code logs through `logger` below, which adds the correlation id of the current request. */
export const baseLogger = new Logger({ serviceName, logLevel: LOG_LEVEL });
// Not exported: metrics are written only through recordMetric below.
const metrics = new Metrics({ namespace: 'SupportDesk', serviceName, defaultDimensions: { Stack: STACK_NAME } });

/**
 * The one way to write a metric: one CloudWatch metric (namespace SupportDesk,
 * dimension Stack) of a name from METRICS, written at once as an
 * embedded-metric-format line, so nothing depends on a flush at the end of
 * the invocation; Lambda's log pipeline turns it into a metric, with no SDK
 * call on the hot path. Off outside Lambda.
 */
export function recordMetric(name: MetricName, value = 1, unit: 'Count' | 'Seconds' = 'Count'): void {
  metrics.singleMetric().addMetric(name, unit === 'Seconds' ? MetricUnit.Seconds : MetricUnit.Count, value);
}

const correlation = new AsyncLocalStorage<string>();

/** The correlation id of the request or event this code runs for, if any. */
export const currentCorrelationId = (): string | undefined => correlation.getStore();

/** A correlation id as given by a caller (x-request-id), or a new one when absent or unusable. */
export const correlationIdFrom = (given: string | undefined): string => (given && /^[\x21-\x7e]{1,128}$/.test(given) ? given : randomUUID());

/**
 * Run `fn` on behalf of one request or event: log lines and the events it
 * records carry `id`, so one call can be followed from the API to the receiver.
 */
export function withCorrelation<T>(id: string, fn: () => T): T {
  return correlation.run(id, fn);
}

type Extra = Record<string, unknown>;
// Kept per async context rather than with appendKeys: the local gateway serves concurrent requests in one process.
const withId = (data?: Extra): Extra => {
  const id = correlation.getStore();
  return id ? { correlationId: id, ...data } : (data ?? {});
};

export const logger = {
  info: (message: string, data?: Extra) => baseLogger.info(message, withId(data)),
  warn: (message: string, data?: Extra) => baseLogger.warn(message, withId(data)),
  error: (message: string, data?: Extra) => baseLogger.error(message, withId(data)),
};
