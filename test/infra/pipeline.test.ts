import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { SupportDeskStack } from '../../infra/stack.ts';
import { testStage } from '../support/stage.ts';
import { OUTBOX_INDEX } from '#shared/db/table-definition.ts';
import { RULES } from '#app/bus-rules.ts';
import { BUS_MESSAGE_GROUP, DEFAULT_MAX_CONCURRENCY, OLDEST_MESSAGE_ALARM_SECONDS, OUTBOX_PUBLISHER, QUEUES } from '#app/topology.ts';
import { withParts } from '../support/template.ts';

// The event spine's durability settings in AWS (decisions §7): nothing dropped, nothing holding up the rest.
let template: Template;
/** The nested stack of the alarms without a name (the pipeline's): infra/operations.ts. */
let unnamedAlarms: Template;
beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SupportDeskStack(app, 'Spine', { config: testStage() });
  template = withParts(stack);
  unnamedAlarms = Template.fromStack(stack.alarms);
}, 60_000);

const resources = (type: string, t = template) => Object.values(t.findResources(type)) as { Properties: Record<string, any> }[];

describe('event pipeline in the CDK app', () => {
  it('gives every rule target a dead-letter queue and a retry policy, and alarms on FailedInvocations per rule', () => {
    const rules = resources('AWS::Events::Rule').filter((r) => r.Properties.EventPattern);
    expect(rules).toHaveLength(RULES.length);
    for (const rule of rules) {
      for (const target of rule.Properties.Targets) {
        expect(target.DeadLetterConfig?.Arn).toBeDefined();
        expect(target.RetryPolicy).toEqual({ MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86400 });
      }
    }
    const failed = resources('AWS::CloudWatch::Alarm', unnamedAlarms).filter((a) => a.Properties.MetricName === 'FailedInvocations');
    expect(failed).toHaveLength(RULES.length);
    for (const a of failed) expect(a.Properties).toMatchObject({ Namespace: 'AWS/Events', Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
  });

  it('makes each account its own message group of every queue a rule delivers to (SQS fair queues)', () => {
    const rules = resources('AWS::Events::Rule').filter((r) => r.Properties.EventPattern);
    expect(rules).toHaveLength(RULES.length);
    for (const rule of rules) for (const target of rule.Properties.Targets) expect(target.SqsParameters).toEqual({ MessageGroupId: BUS_MESSAGE_GROUP });
    expect(BUS_MESSAGE_GROUP).toBe('$.detail.accountId');
  });

  it('bounds the stream retries with maxRecordAge (the sweeper covers what it skips) and never blocks on a report', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: Match.objectLike({ 'Fn::GetAtt': Match.arrayWith(['StreamArn']) }),
      MaximumRecordAgeInSeconds: OUTBOX_PUBLISHER.maxRecordAgeSeconds,
      MaximumRetryAttempts: OUTBOX_PUBLISHER.retryAttempts,
      ParallelizationFactor: OUTBOX_PUBLISHER.parallelizationFactor,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('caps the concurrency of every queue event source', () => {
    const sqsMappings = resources('AWS::Lambda::EventSourceMapping').filter((m) => m.Properties.ScalingConfig || !m.Properties.StartingPosition);
    expect(sqsMappings).toHaveLength(QUEUES.length);
    const expected = QUEUES.map((q) => q.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY).sort();
    expect(sqsMappings.map((m) => m.Properties.ScalingConfig?.MaximumConcurrency).sort()).toEqual(expected);
  });

  it("gives each consumer what its topology row declares: email as the stage's sender, a URL output, its queue-age alarm", () => {
    // Logical ids drop the dashes of construct ids: Consumer-email-sender/Fn -> ConsumeremailsenderFn<hash>.
    const id = (name: string) => name.replaceAll('-', '');
    const ofPrefix = (type: string, prefix: string) => Object.entries(template.findResources(type)).filter(([logicalId]) => logicalId.startsWith(prefix));
    const alarms = resources('AWS::CloudWatch::Alarm');
    expect(QUEUES.some((q) => q.sendsEmail) && QUEUES.some((q) => q.urlOutput) && QUEUES.some((q) => q.oldestMessageAlarmSeconds)).toBe(true);
    for (const q of QUEUES) {
      const [[, fn]] = ofPrefix('AWS::Lambda::Function', `Consumer${id(q.name)}Fn`);
      const policy = JSON.stringify(ofPrefix('AWS::IAM::Policy', `Consumer${id(q.name)}Role`));
      if (q.sendsEmail) {
        expect(fn.Properties.Environment.Variables).toMatchObject({ EMAIL_TRANSPORT: 'ses', EMAIL_FROM: 'support@test.example' });
        expect(policy).toMatch(/"ses:SendEmail".*:identity\/test\.example"/);
      } else {
        expect(fn.Properties.Environment.Variables.EMAIL_TRANSPORT, q.name).toBeUndefined();
        expect(policy, q.name).not.toMatch(/ses:/);
      }
      if (q.urlOutput) template.hasOutput(q.urlOutput, { Value: { Ref: Match.stringLikeRegexp(`^${id(q.name)}[0-9A-F]{8}$`) } });
      const age = alarms.filter((a) => String(a.Properties.AlarmName).endsWith(`-${q.name}-oldest-message`));
      expect(age.map((a) => a.Properties.Threshold)).toEqual([q.oldestMessageAlarmSeconds ?? OLDEST_MESSAGE_ALARM_SECONDS]);
    }
  });

  it('alarms on an outbox that stops draining (missing data breaches) and on parked events', () => {
    unnamedAlarms.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'OutboxOldestPendingAgeSeconds', TreatMissingData: 'breaching' });
    unnamedAlarms.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'OutboxEventsParked', Statistic: 'Sum', Threshold: 0 });
  });

  it('indexes pending outbox items in their own keys-only index', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      GlobalSecondaryIndexes: Match.arrayWith([
        {
          IndexName: OUTBOX_INDEX.name,
          KeySchema: [
            { AttributeName: 'obpk', KeyType: 'HASH' },
            { AttributeName: 'obsk', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'KEYS_ONLY' },
        },
      ]),
    });
  });
});
