import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { EMAIL_INBOUND } from '#app/topology.ts';
import { stageConfig, stackNameOf } from '../../infra/config.ts';
import { bundles } from '../../infra/imports.ts';
import { ENTRY_METADATA, PROJECT_ROOT } from '../../infra/service-function.ts';
import { settingsProblems } from '../../infra/settings.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import { synthesizeLocalStack } from '../../local/lambda/template.ts';
import { testStage } from '../support/stage.ts';

/**
 * The email channel's AWS side (decisions §17, infra/email.ts): SES receiving
 * for the stage's inbound domain into the bucket and the inbound function, the
 * sending configuration set's bounces and complaints to that function, and the
 * inbound domain told to every function that builds addresses. One synth
 * without esbuild; the local stage's template (global setup) for what the
 * local stack reads of it.
 */
const STAGES = Object.entries(JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context.stages as Record<string, object>);
let main: Template;
let email: Template;
let stack: SupportDeskStack;
beforeAll(() => {
  stack = new SupportDeskStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Test', { config: testStage() });
  main = Template.fromStack(stack);
  email = Template.fromStack(stack.email.stack);
}, 120_000);

type Resource = { Type: string; Properties: any; Metadata?: any };
const functionsOf = (t: Template) => Object.entries(t.findResources('AWS::Lambda::Function')) as [string, Resource][];
/** The inbound function's logical id in the email stack. */
const inboundId = () => functionsOf(email).find(([, f]) => f.Metadata[ENTRY_METADATA] === EMAIL_INBOUND.entry)![0];
/** What a parameter of the email stack is given by the stack (a Ref or GetAtt of the parent's resource). */
function parameterValue(name: string): unknown {
  const nested = Object.values(main.findResources('AWS::CloudFormation::Stack')) as Resource[];
  return nested.map((r) => r.Properties.Parameters?.[name]).find((v) => v !== undefined);
}
const uploadsBucketId = () => Object.keys(main.findResources('AWS::S3::Bucket')).find((id) => id.startsWith('UploadsBucket'))!;

describe('the email channel, deployed', () => {
  it('takes the stage inbound domain, which must be a lower-case domain name', () => {
    const base = { stage: 'x1', account: '123456789012', region: 'eu-west-1', emailFrom: 'a@b.example', alarms: { email: 'a@b.example' } };
    expect(() => stageConfig(base)).toThrow(/inboundDomain/);
    expect(() => stageConfig({ ...base, inboundDomain: 'Inbound.Example.com' })).toThrow(/inboundDomain/);
    expect(() => stageConfig({ ...base, inboundDomain: 'localhost' })).toThrow(/inboundDomain/);
    expect(stageConfig({ ...base, inboundDomain: 'inbound.b.example' }).inboundDomain).toBe('inbound.b.example');
  });

  it('has one receipt rule for the inbound domain, scanning, that stores the raw mail under inbound/ in the uploads bucket and then invokes the inbound function (Event)', () => {
    // Arrange
    const rules = Object.values(email.findResources('AWS::SES::ReceiptRule')) as Resource[];
    const ruleSets = email.findResources('AWS::SES::ReceiptRuleSet');

    // Assert
    expect(rules).toHaveLength(1);
    expect(Object.values(ruleSets)).toEqual([expect.objectContaining({ Properties: { RuleSetName: 'Test-inbound' } })]);
    const { Rule: rule, RuleSetName } = rules[0].Properties;
    expect(RuleSetName).toEqual({ Ref: Object.keys(ruleSets)[0] });
    expect(rule).toMatchObject({ Enabled: true, Recipients: ['inbound.test.example'], ScanEnabled: true });
    // S3 first, then Lambda: the function reads the object the S3 action wrote.
    expect(rule.Actions.map((a: object) => Object.keys(a)[0])).toEqual(['S3Action', 'LambdaAction']);
    const [{ S3Action: s3 }, { LambdaAction: lambda }] = rule.Actions;
    expect(s3.ObjectKeyPrefix).toBe('inbound/');
    expect(parameterValue(s3.BucketName.Ref)).toEqual({ Ref: uploadsBucketId() });
    expect(lambda).toEqual({ FunctionArn: { 'Fn::GetAtt': [inboundId(), 'Arn'] }, InvocationType: 'Event' });
    // SES may write under inbound/ only, and invoke the function only for this account.
    main.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 's3:PutObject',
            Principal: { Service: 'ses.amazonaws.com' },
            Resource: { 'Fn::Join': ['', [{ 'Fn::GetAtt': [uploadsBucketId(), 'Arn'] }, '/inbound/*']] },
            Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } },
          }),
        ]),
      },
    });
    email.hasResourceProperties('AWS::Lambda::Permission', { Principal: 'ses.amazonaws.com', FunctionName: { 'Fn::GetAtt': [inboundId(), 'Arn'] }, SourceAccount: { Ref: 'AWS::AccountId' } });
    // The domain's identity, whose DKIM records the platform team publishes.
    email.hasResourceProperties('AWS::SES::EmailIdentity', { EmailIdentity: 'inbound.test.example' });
  });

  it('keeps raw mail 30 days under inbound/ and quarantined mail 90 days under quarantine/', () => {
    main.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'inbound/', ExpirationInDays: EMAIL_INBOUND.inboundRetentionDays, Status: 'Enabled' }),
          Match.objectLike({ Prefix: 'quarantine/', ExpirationInDays: EMAIL_INBOUND.quarantineRetentionDays, Status: 'Enabled' }),
        ]),
      },
    });
    expect([EMAIL_INBOUND.inboundRetentionDays, EMAIL_INBOUND.quarantineRetentionDays]).toEqual([30, 90]);
  });

  it('lets the inbound function read inbound/ (only read), write quarantine/ and attachments/', () => {
    const policies = Object.values(email.findResources('AWS::IAM::Policy')) as Resource[];
    const s3 = policies.flatMap((p) => p.Properties.PolicyDocument.Statement).filter((s: any) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    // Each grant as `action on <prefix>` (an object ARN ends in its prefix; listing is the bucket's, by prefix).
    const where = (r: any, condition: any) => (r['Fn::Join'] ? r['Fn::Join'][1].at(-1) : `the bucket, prefix ${condition.StringLike['s3:prefix']}`);
    const granted = s3.flatMap((s: any) => [s.Action].flat().flatMap((a: string) => [s.Resource].flat().map((r: any) => `${a} on ${where(r, s.Condition)}`))).sort();
    expect(granted).toEqual(expect.arrayContaining(['s3:GetObject on /inbound/*', 's3:ListBucket on the bucket, prefix inbound/*', 's3:PutObject on /attachments/*', 's3:PutObject on /quarantine/*']));
    // The mail SES stored is only read: it expires by the bucket's rule, never by the function.
    expect(granted.filter((g) => g.includes('inbound/'))).toEqual(['s3:GetObject on /inbound/*', 's3:ListBucket on the bucket, prefix inbound/*']);
  });

  it("sends with the stage's configuration set, whose bounces and complaints reach the inbound function through an encrypted, TLS-only topic", () => {
    // The configuration set and its destination.
    email.hasResourceProperties('AWS::SES::ConfigurationSet', { Name: 'Test-sending' });
    const topicId = Object.keys(email.findResources('AWS::SNS::Topic'))[0];
    email.hasResourceProperties('AWS::SES::ConfigurationSetEventDestination', {
      ConfigurationSetName: { Ref: Object.keys(email.findResources('AWS::SES::ConfigurationSet'))[0] },
      EventDestination: { Enabled: true, MatchingEventTypes: ['bounce', 'complaint'], SnsDestination: { TopicARN: { Ref: topicId } } },
    });
    email.hasResourceProperties('AWS::SNS::Topic', { TopicName: 'Test-ses-notifications', KmsMasterKeyId: Match.anyValue() });
    email.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          Match.objectLike({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'ses.amazonaws.com' } }),
        ]),
      },
    });
    email.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    // The subscription: the inbound function, with a dead-letter queue for what SNS cannot deliver.
    email.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'lambda',
      TopicArn: { Ref: topicId },
      Endpoint: { 'Fn::GetAtt': [inboundId(), 'Arn'] },
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue() },
    });
    email.hasResourceProperties('AWS::Lambda::EventInvokeConfig', { MaximumRetryAttempts: 2, DestinationConfig: { OnFailure: { Destination: Match.anyValue() } } });

    // The sender: told the set, and allowed to send (raw MIME too) with it from the stage's identity.
    const [, sender] = functionsOf(main).find(([, f]) => f.Metadata[ENTRY_METADATA] === 'functions/email-sender/handler.ts')!;
    expect(sender.Properties.Environment.Variables).toMatchObject({ EMAIL_TRANSPORT: 'ses', EMAIL_FROM: 'support@test.example', SES_CONFIGURATION_SET: 'Test-sending' });
    main.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: ['ses:SendEmail', 'ses:SendRawEmail'],
            Resource: [
              { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:eu-west-1:123456789012:identity/test.example']] },
              { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':ses:eu-west-1:123456789012:configuration-set/Test-sending']] },
            ],
          }),
        ]),
      },
    });
  });

  it('tells INBOUND_DOMAIN to exactly the functions whose bundles build inbound addresses, in the stack and its nested stacks', () => {
    const all = [...functionsOf(main), ...functionsOf(email)].map(([id, f]) => ({ id, entry: f.Metadata[ENTRY_METADATA] as string, variables: f.Properties.Environment?.Variables ?? {} }));
    expect(all.map((f) => f.entry)).toContain(EMAIL_INBOUND.entry);
    for (const f of all) {
      expect(f.variables.INBOUND_DOMAIN, f.entry).toBe(bundles(f.entry, 'shared/email/addresses.ts') ? 'inbound.test.example' : undefined);
      expect(settingsProblems(f.id, f.entry, f.variables, 'eu-west-1'), f.entry).toEqual([]);
    }
  });

  it('names the domain and the rule set for the platform team', () => {
    main.hasOutput('InboundDomain', { Value: 'inbound.test.example' });
    main.hasOutput('ReceiptRuleSetName', { Value: 'Test-inbound' });
    main.hasOutput('SesConfigurationSetName', { Value: 'Test-sending' });
    main.hasOutput('InboundDkimRecords', { Value: Match.anyValue() });
  });

  it.each(STAGES.map(([stage]) => stage))("keeps %s's stack within CloudFormation's 500 resources (the email channel costs it one, its nested stack)", (stage) => {
    const settings = Object.fromEntries(STAGES)[stage];
    // As `cdk synth` builds it: with the CDK's metadata resource, which counts too.
    const app = new App({ analyticsReporting: true, context: { 'aws:cdk:bundling-stacks': [] } });
    const staged = new SupportDeskStack(app, stackNameOf(stage), { config: stageConfig({ ...settings, stage }) });
    expect(Object.keys(Template.fromStack(staged).toJSON().Resources).length).toBeLessThanOrEqual(500);
  });
});

describe('the email channel, as the local stack reads it', () => {
  it('reads the receipt rule (domain, bucket and prefix, function) and the notification subscription from the local template', async () => {
    // Arrange: the local stage's template, nested stacks flattened, as the local stack synthesizes it (local/lambda/template.ts).
    const { stackName, template } = await synthesizeLocalStack();
    const d = readDeployment(stackName, template);
    const inbound = [...d.functions.values()].find((f) => f.entry === EMAIL_INBOUND.entry)!;

    // Assert
    expect(inbound.name).toBe('EmailInbound');
    expect(d.receiptRules).toHaveLength(1);
    const [rule] = d.receiptRules;
    expect(rule).toMatchObject({ recipients: ['inbound.localhost'], scanEnabled: true });
    expect(rule.actions).toEqual([
      { type: 'S3', bucketId: expect.stringMatching(/^UploadsBucket/), objectKeyPrefix: 'inbound/' },
      { type: 'Lambda', functionId: inbound.logicalId, invocationType: 'Event' },
    ]);
    expect(d.buckets.has((rule.actions[0] as { bucketId: string }).bucketId)).toBe(true);
    expect(d.topicSubscriptions).toEqual([{ topicId: expect.any(String), topicName: 'SupportDesk-local-ses-notifications', functionId: inbound.logicalId }]);
  });
});
