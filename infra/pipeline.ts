import { CfnOutput, Duration, type Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction, SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { RULES } from '#app/bus-rules.ts';
import { BUS_MESSAGE_GROUP, DEFAULT_MAX_CONCURRENCY, MESSAGE_RETENTION_SECONDS, OUTBOX_PUBLISHER, QUEUES, SCHEDULES, type QueueDef, type QueueName } from '#app/topology.ts';
import type { StageConfig } from './config.ts';
import type { EmailChannel } from './email.ts';
import type { Functions } from './functions.ts';
import { nagAck } from './nag.ts';
import type { Parts } from './parts.ts';

/**
 * The event pipeline, from the topology table (app/topology.ts): a queue and
 * its dead-letter queue per row, the bus rules into them, each row's consumer
 * with what the row declares (queues it sends to, its DLQ, email), the outbox
 * publisher on the table's stream with its sweeper, and the scheduled jobs.
 * Built in the stack's own scope, so every resource keeps its logical id.
 */
export class Pipeline {
  readonly queues = {} as Record<QueueName, Queue>;
  /** Every dead-letter queue: one per topology queue (in QUEUES order), the rule targets', the stream publisher's, the inbound mail function's. */
  readonly dlqs: Queue[] = [];
  readonly rules: Rule[] = [];
  /** The table stream's consumer. */
  readonly publisher: NodejsFunction;

  constructor(
    private readonly scope: Stack,
    props: { config: StageConfig; table: ITable; bus: IEventBus; functions: Functions; email: EmailChannel; parts: Parts },
  ) {
    const { config, table, bus, functions, email, parts } = props;
    const retentionPeriod = Duration.seconds(MESSAGE_RETENTION_SECONDS);
    const dlqOf = new Map<QueueName, Queue>();
    for (const q of QUEUES) {
      // A row of a feature's part is built in that part's nested stack (infra/parts.ts), its rules and consumer too.
      const home = parts.of(q.part);
      const dlq = new Queue(home, `${q.name}-dlq`, { retentionPeriod, encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
      dlqOf.set(q.name, dlq);
      this.dlqs.push(dlq);
      this.queues[q.name] = new Queue(home, q.name, {
        visibilityTimeout: Duration.seconds(q.visibilityTimeoutSeconds),
        retentionPeriod,
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
      });
      if (q.urlOutput) new CfnOutput(scope, q.urlOutput, { value: this.queues[q.name].queueUrl });
    }

    // An event EventBridge cannot hand to its target queue (after retrying for a day) is parked here, not dropped.
    const ruleTargetDlq = new Queue(scope, 'rule-target-failures', { retentionPeriod, encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    nagAck(ruleTargetDlq, 'SQS3', "Dead-letter queue of the EventBridge rule targets itself; its depth and the rules' FailedInvocations are alarmed.");
    this.dlqs.push(ruleTargetDlq);
    for (const r of RULES) {
      this.rules.push(
        new Rule(parts.of(QUEUES.find((q) => q.name === r.queue)!.part), `Rule-${r.name}`, {
          eventBus: bus,
          description: r.description,
          eventPattern: { source: [...r.pattern.source], ...(r.pattern['detail-type'] ? { detailType: [...r.pattern['detail-type']] } : {}) },
          targets: [
            new SqsQueue(this.queues[r.queue], {
              deadLetterQueue: ruleTargetDlq,
              retryAttempts: 185,
              maxEventAge: Duration.hours(24),
              // Every queue is a fair queue: each account is its own message group.
              messageGroupId: BUS_MESSAGE_GROUP,
            }),
          ],
        }),
      );
    }

    for (const q of QUEUES) this.consumer(q, dlqOf.get(q.name)!, config, functions, email, parts);

    // --- Outbox publisher (table stream) and its sweeper (schedule): no ticket event is lost.
    const publisherDlq = new Queue(scope, 'outbox-publisher-failures', { retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    nagAck(publisherDlq, 'SQS3', 'On-failure destination of the stream mapping, i.e. a dead-letter queue itself; its depth is alarmed, and the sweeper republishes from the table anyway.');
    this.dlqs.push(publisherDlq);
    this.publisher = functions.add({
      id: 'OutboxPublisher',
      entry: OUTBOX_PUBLISHER.consumer,
      description: 'Publishes outbox items from the table stream to EventBridge',
      tableAccess: 'readWrite',
      timeoutSeconds: 60,
    });
    this.publisher.addEventSource(
      new DynamoEventSource(table, {
        startingPosition: StartingPosition.LATEST,
        batchSize: OUTBOX_PUBLISHER.batchSize,
        bisectBatchOnError: true,
        retryAttempts: OUTBOX_PUBLISHER.retryAttempts,
        maxRecordAge: Duration.seconds(OUTBOX_PUBLISHER.maxRecordAgeSeconds),
        parallelizationFactor: OUTBOX_PUBLISHER.parallelizationFactor,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(publisherDlq),
        filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT'), dynamodb: { NewImage: { type: { S: FilterRule.isEqual('outbox') } } } })],
      }),
    );
    bus.grantPutEventsTo(this.publisher);
    // Alarmed and charted with the others (infra/operations.ts); it lives in the email channel's nested stack.
    this.dlqs.push(email.failures);
    const sweeper = functions.add({
      id: 'OutboxSweeper',
      entry: OUTBOX_PUBLISHER.sweeper,
      description: 'Republishes outbox items the stream did not',
      tableAccess: 'readWrite',
      environment: { OUTBOX_SWEEP_AGE_SECONDS: String(OUTBOX_PUBLISHER.sweepAgeSeconds) },
      timeoutSeconds: 60,
    });
    bus.grantPutEventsTo(sweeper);
    new Rule(scope, 'OutboxSweepSchedule', { schedule: Schedule.rate(Duration.minutes(OUTBOX_PUBLISHER.sweepScheduleMinutes)), targets: [new LambdaFunction(sweeper)] });

    // --- Scheduled jobs of the topology (one function and one schedule rule each).
    for (const s of SCHEDULES) {
      const home = parts.of(s.part);
      const job = functions.add({
        scope: home,
        id: `Schedule-${s.name}`,
        entry: s.entry,
        description: s.description,
        tableAccess: 'readWrite',
        environment: this.sendEnv(s.sendsTo),
        timeoutSeconds: s.functionTimeoutSeconds,
      });
      this.grantSends(job, s.sendsTo);
      new Rule(home, `Schedule-${s.name}-rule`, { description: s.description, schedule: Schedule.rate(Duration.minutes(s.rateMinutes)), targets: [new LambdaFunction(job)] });
    }
  }

  /** Environment naming the queues a function sends to (a row's or a group's `sendsTo`), through each queue's `urlEnv`. */
  sendEnv(sendsTo: readonly QueueName[] = []): Record<string, string> {
    return Object.fromEntries(sendsTo.map((name) => [QUEUES.find((q) => q.name === name)!.urlEnv!, this.queues[name].queueUrl]));
  }

  /** Let a function send to the queues it names. */
  grantSends(fn: IGrantable, sendsTo: readonly QueueName[] = []): void {
    for (const name of sendsTo) this.queues[name].grantSendMessages(fn);
  }

  /** A row's consumer: its event source, and what the row declares it needs. */
  private consumer(q: QueueDef, dlq: Queue, config: StageConfig, functions: Functions, email: EmailChannel, parts: Parts) {
    const queue = this.queues[q.name];
    const consumer = functions.add({
      scope: parts.of(q.part),
      id: `Consumer-${q.name}`,
      entry: q.consumer,
      description: q.description,
      tableAccess: 'readWrite',
      environment: {
        ...this.sendEnv(q.sendsTo),
        // A consumer that dead-letters explicitly (its row names dlqUrlEnv) gets its DLQ's URL and may send to it.
        ...(q.dlqUrlEnv ? { [q.dlqUrlEnv]: dlq.queueUrl } : {}),
        ...(q.sendsEmail ? { EMAIL_TRANSPORT: 'ses', EMAIL_FROM: config.emailFrom } : {}),
      },
      timeoutSeconds: q.functionTimeoutSeconds,
    });
    consumer.addEventSource(new SqsEventSource(queue, { batchSize: q.batchSize, reportBatchItemFailures: true, maxConcurrency: q.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY }));
    // The consumer shortens a failed message's visibility (backoff) instead of waiting out the queue's timeout.
    queue.grant(consumer, 'sqs:ChangeMessageVisibility');
    this.grantSends(consumer, q.sendsTo);
    if (q.dlqUrlEnv) dlq.grantSendMessages(consumer);
    // With the stage's configuration set, whose bounces and complaints reach the inbound function (decisions §17).
    if (q.sendsEmail) email.grantSend(consumer, config);
  }
}
