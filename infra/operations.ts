import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import type { RestApiBase } from 'aws-cdk-lib/aws-apigateway';
import { Alarm, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';
import { OLDEST_MESSAGE_ALARM_SECONDS, QUEUES } from '#app/topology.ts';
import { METRICS } from '#shared/metrics.ts';
import { metricDimensions } from '#shared/service.ts';
import type { StageConfig } from './config.ts';
import type { StackFunction } from './functions.ts';
import type { Pipeline } from './pipeline.ts';

/** An alarm: it pages when the metric goes above the threshold. */
interface AlarmOptions {
  description: string;
  metric: IMetric;
  threshold: number;
  /** Periods above the threshold before it pages (default 1). */
  evaluationPeriods?: number;
  /** Default: no data is not a breach. */
  treatMissingData?: TreatMissingData;
  /**
   * Named `<stack>-<id>`, as the service-wide alarms are, and kept in the
   * stack itself. The pipeline's alarms were deployed without a name (naming
   * one now would replace it); they live in the nested stack `Alarms`.
   */
  named?: boolean;
  /** Where a named alarm is built, when not the stack itself: the nested stack of a function that lives in one. */
  home?: Construct;
}

/**
 * Paging and overview: anything in a dead-letter queue, an outbox that stops
 * draining, a publisher falling behind, a rule that cannot deliver, a failed
 * authorizer-cache flush; errors and throttles of every function (the
 * authorizer above all), API 5XX and p99 latency, the age of the oldest
 * message of each queue (its row's limit), DynamoDB throttles. Every alarm of
 * the stack notifies the stage's topic; one dashboard shows the same signals.
 * Built in the stack's own scope, so every named resource keeps its logical id.
 *
 * The alarms without a name (dead letters, rules, outbox, publisher, cache
 * flush) live in a nested stack: the service's stack is close to
 * CloudFormation's 500 resources, and this way some thirty alarms cost it one.
 * Moving an unnamed alarm replaces it under a new generated name, which no one
 * refers to; a named alarm would clash with itself during the move, so those
 * stay where they are.
 */
export class Operations {
  /** The nested stack of the unnamed alarms. */
  readonly alarms: NestedStack;

  constructor(
    private readonly scope: Stack,
    props: { config: StageConfig; table: ITable; api: RestApiBase; bus: IEventBus; pipeline: Pipeline; functions: readonly StackFunction[] },
  ) {
    const { config, table, api, bus, pipeline, functions } = props;
    const { queues, dlqs } = pipeline;
    this.alarms = new NestedStack(scope, 'Alarms', { description: `Alarms of ${scope.stackName} that carry no name of their own (dead letters, rules, outbox, publisher)` });

    // --- The pipeline: anything in a dead-letter queue, an outbox that stops draining, a publisher falling behind.
    for (const dlq of dlqs) {
      this.alarm(`${dlq.node.id}-depth`, {
        description: `Messages in ${dlq.node.id}: deliveries or events need attention`,
        metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        threshold: 0,
      });
    }
    this.alarm('OutboxAge', {
      description: 'The oldest unpublished ticket event is over 5 minutes old',
      metric: this.serviceMetric(METRICS.outboxAge, 'Maximum', Duration.minutes(1)),
      threshold: 300,
      evaluationPeriods: 2,
      // The sweeper reports every minute; silence means it is not running, and then nothing catches missed events.
      treatMissingData: TreatMissingData.BREACHING,
    });
    this.alarm('OutboxParked', {
      description: 'The bus refused an event for good; it is parked in the outbox (npm run admin -- list-parked)',
      metric: this.serviceMetric(METRICS.outboxParked, 'Sum', Duration.minutes(5)),
      threshold: 0,
    });
    this.alarm('AuthorizerCacheFlushFailed', {
      description: 'A credential change could not flush the authorizer cache: revoked keys, suspended users, new roles or plans take up to the cache TTL to apply',
      metric: this.serviceMetric(METRICS.authorizerCacheFlushFailed, 'Sum', Duration.minutes(5)),
      threshold: 0,
    });
    for (const rule of pipeline.rules) {
      this.alarm(`${rule.node.id}-failed-invocations`, {
        description: `EventBridge could not deliver events of ${rule.node.id} to its queue; they go to rule-target-failures`,
        metric: new Metric({
          namespace: 'AWS/Events',
          metricName: 'FailedInvocations',
          dimensionsMap: { RuleName: rule.ruleName, EventBusName: bus.eventBusName },
          statistic: 'Sum',
          period: Duration.minutes(5),
        }),
        threshold: 0,
      });
    }
    this.alarm('PublisherIteratorAge', {
      description: 'The outbox publisher is more than a minute behind the table stream',
      metric: pipeline.publisher.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 60_000,
      evaluationPeriods: 3,
    });

    const topic: ITopic = config.alarms.topicArn
      ? Topic.fromTopicArn(scope, 'AlarmTopic', config.alarms.topicArn)
      : new Topic(scope, 'AlarmTopic', { topicName: `${scope.stackName}-alarms`, enforceSSL: true });
    if (config.alarms.email) topic.addSubscription(new EmailSubscription(config.alarms.email));

    // --- The service: functions, API, queues, table.
    for (const { name, fn } of functions) {
      const authorizer = name === 'AuthorizerFunction';
      // A function of a nested stack (the email channel's) keeps its alarms there: the stack has no room to spare.
      const home = Stack.of(fn);
      // One alarm a function, on its errors and its throttles together (the stack is at CloudFormation's 500 resources,
      // and a second alarm per function was 30 of them): any throttle pages, and a burst of errors (any error of the
      // authorizer: every API call goes through it). Named anew (`-failing`), so the two alarms it replaces are deleted
      // rather than clashing with it.
      this.alarm(`${name}-failing`, {
        description: `${name}: ${authorizer ? 'any invocation error (every API call goes through the authorizer)' : 'more than 4 invocation errors in 5 minutes'} or any throttled invocation`,
        metric: new MathExpression({
          expression: authorizer ? 'errors + throttles' : 'errors + 5 * throttles',
          usingMetrics: { errors: fn.metricErrors({ statistic: 'Sum' }), throttles: fn.metricThrottles({ statistic: 'Sum' }) },
          period: Duration.minutes(5),
          label: `${name} errors and throttles`,
        }),
        threshold: authorizer ? 0 : 4,
        named: true,
        home,
      });
    }
    this.alarm('Api5xx', { description: 'The API answered 5XX', metric: api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }), threshold: 4, named: true });
    this.alarm('ApiLatencyP99', {
      description: 'API p99 latency above 3 s for 15 minutes',
      metric: api.metricLatency({ period: Duration.minutes(5), statistic: 'p99' }),
      threshold: 3000,
      evaluationPeriods: 3,
      named: true,
    });
    for (const q of QUEUES) {
      const maxAgeSeconds = q.oldestMessageAlarmSeconds ?? OLDEST_MESSAGE_ALARM_SECONDS;
      this.alarm(`${q.name}-oldest-message`, {
        description: `${q.name}: the oldest message waits longer than ${maxAgeSeconds / 60} minutes`,
        metric: queues[q.name].metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
        threshold: maxAgeSeconds,
        named: true,
        // A queue of a feature's part (infra/parts.ts) keeps its alarm in that part's nested stack.
        home: Stack.of(queues[q.name]),
      });
    }
    const throttles = new MathExpression({
      expression: 'r + w',
      usingMetrics: { r: table.metric('ReadThrottleEvents', { statistic: 'Sum' }), w: table.metric('WriteThrottleEvents', { statistic: 'Sum' }) },
      period: Duration.minutes(5),
      label: 'DynamoDB throttle events',
    });
    this.alarm('TableThrottles', { description: 'DynamoDB throttled reads or writes (the API answers 503 meanwhile)', metric: throttles, threshold: 0, named: true });

    for (const node of scope.node.findAll()) if (node instanceof Alarm) node.addAlarmAction(new SnsAction(topic));

    const fnMetrics = (m: (f: NodejsFunction) => IMetric) => functions.map(({ fn }) => m(fn));
    new Dashboard(scope, 'Dashboard', {
      dashboardName: `${scope.stackName}-overview`,
      widgets: [
        [
          new GraphWidget({
            title: 'API requests and 5XX',
            left: [api.metricCount({ period: Duration.minutes(1) })],
            right: [api.metricServerError({ period: Duration.minutes(1) }), api.metricClientError({ period: Duration.minutes(1) })],
          }),
          new GraphWidget({ title: 'API latency p50 / p99 (ms)', left: [api.metricLatency({ statistic: 'p50' }), api.metricLatency({ statistic: 'p99' })] }),
        ],
        [
          new GraphWidget({ title: 'Function errors', left: fnMetrics((f) => f.metricErrors({ period: Duration.minutes(1) })), width: 12 }),
          new GraphWidget({ title: 'Function throttles', left: fnMetrics((f) => f.metricThrottles({ period: Duration.minutes(1) })), width: 12 }),
        ],
        [
          new GraphWidget({ title: 'Queue: oldest message (s)', left: QUEUES.map((q) => queues[q.name].metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1) })), width: 12 }),
          new GraphWidget({ title: 'Dead-letter queues: messages', left: dlqs.map((d) => d.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) })), width: 12 }),
        ],
        [new GraphWidget({ title: 'Outbox: oldest pending event (s)', left: [this.serviceMetric(METRICS.outboxAge, 'Maximum')] }), new GraphWidget({ title: 'DynamoDB throttles', left: [throttles] })],
      ],
    });
  }

  /** The one way an alarm of the stack is built. */
  private alarm(id: string, o: AlarmOptions): Alarm {
    return new Alarm(o.named ? (o.home ?? this.scope) : this.alarms, id, {
      alarmName: o.named ? `${this.scope.stackName}-${id}` : undefined,
      alarmDescription: o.description,
      metric: o.metric,
      threshold: o.threshold,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: o.evaluationPeriods ?? 1,
      treatMissingData: o.treatMissingData ?? TreatMissingData.NOT_BREACHING,
    });
  }

  /** A metric the functions write (shared/metrics.ts), of this stack. */
  private serviceMetric(metricName: string, statistic: string, period?: Duration): Metric {
    return new Metric({ namespace: 'SupportDesk', metricName, dimensionsMap: metricDimensions(this.scope.stackName), statistic, period });
  }
}
