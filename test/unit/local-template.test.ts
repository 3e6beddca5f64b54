import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDeployment, type Deployment, type FunctionDef } from '../../local/lambda/deployment.ts';
import { LocalFunction } from '../../local/lambda/runtime.ts';
import { flattenNestedStacks, type Template } from '../../local/lambda/template.ts';
import { headerFields, sesMessageId } from '../../local/smtp.ts';
import { BACKGROUND_CONCURRENCY, BACKGROUND_NICE, localConcurrency, localPriority } from '../../local/stack.ts';

/**
 * How the local stack reads a template with nested stacks (the email
 * channel's, the alarms'): one flat template, each reference as the parent
 * passes it; and the receipt rule the SMTP server plays, from it.
 */
const parent: Template = {
  Resources: {
    Bucket: { Type: 'AWS::S3::Bucket', Metadata: { 'aws:cdk:path': 'S/Uploads/Bucket/Resource' } },
    Email: {
      Type: 'AWS::CloudFormation::Stack',
      Properties: { Parameters: { refBucketRef: { Ref: 'Bucket' }, refBucketArn: { 'Fn::GetAtt': ['Bucket', 'Arn'] } } },
    },
    Sender: { Type: 'AWS::Lambda::Function', Properties: { Environment: { Variables: { QUEUE: { 'Fn::GetAtt': ['Email', 'Outputs.SFailuresUrl'] } } } } },
  },
  Outputs: { RuleSet: { Value: { 'Fn::GetAtt': ['Email', 'Outputs.SRuleSetRef'] } } },
};
const email: Template = {
  Parameters: { refBucketRef: { Type: 'String' }, refBucketArn: { Type: 'String' } },
  Resources: {
    Fn: { Type: 'AWS::Lambda::Function', Metadata: { 'SupportDesk::Entry': 'functions/email-inbound/handler.ts', 'aws:cdk:path': 'S/Email/EmailInbound/Fn/Resource' } },
    Policy: { Type: 'AWS::IAM::Policy', Properties: { Resource: { 'Fn::Join': ['', [{ Ref: 'refBucketArn' }, '/inbound/*']] }, Region: { Ref: 'AWS::Region' } } },
    RuleSet: { Type: 'AWS::SES::ReceiptRuleSet' },
    Rule: {
      Type: 'AWS::SES::ReceiptRule',
      Properties: {
        RuleSetName: { Ref: 'RuleSet' },
        Rule: {
          Name: 'inbound-mail',
          Enabled: true,
          Recipients: ['inbound.localhost'],
          ScanEnabled: true,
          Actions: [{ S3Action: { BucketName: { Ref: 'refBucketRef' }, ObjectKeyPrefix: 'inbound/' } }, { LambdaAction: { FunctionArn: { 'Fn::GetAtt': ['Fn', 'Arn'] }, InvocationType: 'Event' } }],
        },
      },
    },
    Topic: { Type: 'AWS::SNS::Topic', Properties: { TopicName: 'S-ses-notifications' } },
    Sub: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'lambda', TopicArn: { Ref: 'Topic' }, Endpoint: { 'Fn::GetAtt': ['Fn', 'Arn'] } } },
    Failures: { Type: 'AWS::SQS::Queue' },
  },
  Outputs: { SFailuresUrl: { Value: { Ref: 'Failures' } }, SRuleSetRef: { Value: { Ref: 'RuleSet' } } },
};

describe('flattenNestedStacks', () => {
  it("joins a nested stack's resources to the parent's, its parameters and outputs replaced by what they stand for", () => {
    // Act
    const flat = flattenNestedStacks(parent, new Map([['Email', email]]));

    // Assert
    expect(Object.keys(flat.Resources).sort()).toEqual(['Bucket', 'Failures', 'Fn', 'Policy', 'Rule', 'RuleSet', 'Sender', 'Sub', 'Topic']);
    expect(flat.Resources.Policy.Properties).toEqual({ Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': ['Bucket', 'Arn'] }, '/inbound/*']] }, Region: { Ref: 'AWS::Region' } });
    expect(flat.Resources.Rule.Properties!.Rule.Actions[0].S3Action.BucketName).toEqual({ Ref: 'Bucket' });
    expect(flat.Resources.Sender.Properties!.Environment.Variables.QUEUE).toEqual({ Ref: 'Failures' });
    expect(flat.Outputs).toEqual({ RuleSet: { Value: { Ref: 'RuleSet' } } });
  });

  it('refuses a logical id used in both, and a template without nested stacks is itself', () => {
    expect(() => flattenNestedStacks(parent, new Map([['Email', { Resources: { Bucket: { Type: 'AWS::SQS::Queue' } } }]]))).toThrow(/Bucket/);
    expect(flattenNestedStacks(parent, new Map())).toBe(parent);
  });

  it('gives the local stack the receipt rule (actions in order) and the topic subscription of the flat template', () => {
    // Arrange: the few resources readDeployment requires besides.
    const flat = flattenNestedStacks(parent, new Map([['Email', email]]));
    Object.assign(flat.Resources, {
      Table: { Type: 'AWS::DynamoDB::Table', Properties: { StreamSpecification: {} } },
      Bus: { Type: 'AWS::Events::EventBus', Properties: { Name: 'bus' } },
      Api: {
        Type: 'AWS::ApiGateway::RestApi',
        Properties: {
          Body: { paths: {}, components: { securitySchemes: { authorizer: { 'x-amazon-apigateway-authorizer': { authorizerUri: 'arn:function:${stageVariables.fn_authorizer}/invocations' } } } } },
        },
      },
      Stage: { Type: 'AWS::ApiGateway::Stage', Properties: { StageName: 'live', Variables: { fn_authorizer: { Ref: 'Fn' } } } },
    });
    delete flat.Resources.Sender;

    // Act
    const d = readDeployment('S', flat);

    // Assert
    expect(d.receiptRules).toEqual([
      {
        logicalId: 'Rule',
        name: 'inbound-mail',
        recipients: ['inbound.localhost'],
        scanEnabled: true,
        actions: [
          { type: 'S3', bucketId: 'Bucket', objectKeyPrefix: 'inbound/' },
          { type: 'Lambda', functionId: 'Fn', invocationType: 'Event' },
        ],
      },
    ]);
    expect(d.topicSubscriptions).toEqual([{ topicId: 'Topic', topicName: 'S-ses-notifications', functionId: 'Fn' }]);
    expect(d.functions.get('Fn')!.name).toBe('EmailInbound');
  });
});

describe('the SMTP server as SES', () => {
  it('reads header fields in order, unfolded, with their names as written', () => {
    const raw = Buffer.from('From: a@b.example\r\nSubject: two\r\n  lines\r\nX-Empty:\r\n\r\nBody: not a header\r\n');
    expect(headerFields(raw)).toEqual([
      { name: 'From', value: 'a@b.example' },
      { name: 'Subject', value: 'two lines' },
      { name: 'X-Empty', value: '' },
    ]);
  });

  it('names each received mail with an id of the form SES gives (the object key under inbound/)', () => {
    const ids = new Set(Array.from({ length: 100 }, sesMessageId));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[a-z0-9]{40}$/);
  });
});

describe("the local functions' priorities (localPriority)", () => {
  const fn = (entry: string) => ({ logicalId: entry, name: entry, entry }) as FunctionDef;
  const outward = [
    'functions/outbox-publisher/handler.ts',
    'functions/outbox-publisher/sweeper.ts',
    'functions/webhook-fanout/handler.ts',
    'functions/webhook-delivery/handler.ts',
    'functions/email-sender/handler.ts',
  ];
  const others = ['functions/tickets/handler.ts', 'functions/authorizer/handler.ts', 'functions/sla-state/handler.ts', 'functions/automations/consumer.ts'];
  const deployment = (entries: string[]) => ({ functions: new Map(entries.map((e) => [e, fn(e)])) }) as unknown as Deployment;

  it('runs the functions that carry events out at the usual priority, and every other one below them', () => {
    const niceOf = localPriority(deployment([...outward, ...others]));
    expect(outward.map((e) => niceOf(fn(e)))).toEqual(outward.map(() => 0));
    expect(others.map((e) => niceOf(fn(e)))).toEqual(others.map(() => BACKGROUND_NICE));
  });

  it('refuses a template without one of them, naming its entry (a renamed function would otherwise fall behind)', () => {
    expect(() => localPriority(deployment([...outward.slice(1), ...others]))).toThrow(/functions\/outbox-publisher\/handler\.ts/);
  });

  it('runs the lowered functions a few invocations at a time, and those that carry events out without a bound', () => {
    const concurrencyOf = localConcurrency(deployment([...outward, ...others]));
    expect(outward.map((e) => concurrencyOf(fn(e)))).toEqual(outward.map(() => undefined));
    expect(others.map((e) => concurrencyOf(fn(e)))).toEqual(others.map(() => BACKGROUND_CONCURRENCY));
  });
});

describe('a local function bounded to some invocations at once (LocalFunction concurrency)', () => {
  // A handler that reports when it ran: overlaps are counted from its own clock, in its worker.
  const dir = mkdtempSync(join(tmpdir(), 'sd-concurrency-'));
  const file = join(dir, 'handler.mjs');
  writeFileSync(file, 'export const handler = async () => { const start = Date.now(); await new Promise((r) => setTimeout(r, 100)); return { start, end: Date.now() }; };\n');
  const def = { logicalId: 'Probe', name: 'Probe', entry: 'probe.mjs', environment: {}, timeoutSeconds: 10, memoryMb: 128, secretsExtension: false } as FunctionDef;
  const mostAtOnce = (runs: { start: number; end: number }[]) => Math.max(...runs.map((r) => runs.filter((o) => o.start <= r.start && r.start < o.end).length));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    [2, 2],
    [undefined, 6],
  ])('with a bound of %s, six invocations sent at once run %s at a time', async (concurrency, expected) => {
    const local = new LocalFunction(def, file, {}, () => {}, 0, concurrency);
    try {
      const runs = await Promise.all(Array.from({ length: 6 }, () => local.invoke<{ start: number; end: number }>({})));
      expect(mostAtOnce(runs)).toBe(expected);
    } finally {
      await local.stop();
    }
  });
});
