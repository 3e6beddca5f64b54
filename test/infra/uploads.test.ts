import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { SupportDeskStack } from '../../infra/stack.ts';
import { ENTRY_METADATA } from '../../infra/service-function.ts';
import { testStage } from '../support/stage.ts';
import { withParts } from '../support/template.ts';

// Two stages, one synth each, without esbuild: server access logs and no scanning (the default), and CloudTrail data
// events with GuardDuty Malware Protection (as prod), with cdk-nag on the second.
let logged: Template;
let scanned: Template;
let scannedApp: App;
beforeAll(() => {
  logged = withParts(new SupportDeskStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Logged', { config: testStage({ uploads: { corsOrigins: ['https://app.test.example'] } }) }));
  scannedApp = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SupportDeskStack(scannedApp, 'Scanned', { config: testStage({ uploads: { accessLogging: 'cloudTrailDataEvents', malwareProtection: true } }) });
  Validations.of(scannedApp).addPlugins(new AwsSolutionsChecks(scannedApp));
  scanned = withParts(stack);
}, 120_000);

const uploadsBucketId = (t: Template) => Object.keys(t.findResources('AWS::S3::Bucket')).find((id) => id.startsWith('UploadsBucket'))!;

/** The S3 statements of each function's role policy, by the function's entry. */
function s3Grants(t: Template): Record<string, Array<{ Action: string | string[]; Resource: unknown }>> {
  const functions = t.findResources('AWS::Lambda::Function');
  const policies = Object.values(t.findResources('AWS::IAM::Policy')) as Array<{ Properties: { Roles: Array<{ Ref: string }>; PolicyDocument: { Statement: any[] } } }>;
  const out: Record<string, any[]> = {};
  for (const fn of Object.values(functions) as any[]) {
    const role = fn.Properties.Role['Fn::GetAtt'][0];
    const statements = policies.filter((p) => p.Properties.Roles.some((r) => r.Ref === role)).flatMap((p) => p.Properties.PolicyDocument.Statement);
    const s3 = statements.filter((s) => [s.Action].flat().some((a: string) => a.startsWith('s3:')));
    if (s3.length) out[fn.Metadata[ENTRY_METADATA]] = s3;
  }
  return out;
}

describe('the uploads bucket', () => {
  it('blocks public access, encrypts at rest, refuses plain HTTP, lets browsers PUT from the stage origins, and expires unattached uploads', () => {
    logged.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      CorsConfiguration: { CorsRules: [Match.objectLike({ AllowedMethods: ['PUT'], AllowedOrigins: ['https://app.test.example'] })] },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ Prefix: 'uploads/', ExpirationInDays: 1, Status: 'Enabled' })]) },
      LoggingConfiguration: Match.objectLike({ DestinationBucketName: Match.anyValue() }),
    });
    logged.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: uploadsBucketId(logged) },
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    logged.resourceCountIs('AWS::CloudTrail::Trail', 0);
    logged.resourceCountIs('AWS::GuardDuty::MalwareProtectionPlan', 0);
  });

  it('grants only the messages and views functions and the jobs consumer (read and write: a merge copies attachments, a macro writes a comment), the clean-up consumer (list and delete under attachments/) and the jobs API (privacy)', () => {
    const grants = s3Grants(logged);
    // The views function applies macros, whose comment is written by the messages service (which claims uploads).
    const entries = ['functions/attachment-cleanup/handler.ts', 'functions/bulk-jobs/handler.ts', 'functions/jobs/handler.ts', 'functions/messages/handler.ts', 'functions/views/handler.ts'];
    expect(Object.keys(grants).sort()).toEqual(entries);
    const actions = (entry: string) => [...new Set(grants[entry].flatMap((s) => [s.Action].flat()))].sort();
    expect(actions('functions/messages/handler.ts')).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    expect(actions('functions/views/handler.ts')).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    expect(actions('functions/bulk-jobs/handler.ts')).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:ListBucket', 's3:PutObject']);
    expect(actions('functions/attachment-cleanup/handler.ts')).toEqual(['s3:DeleteObject', 's3:ListBucket']);
    // Privacy (decisions §23): an erasure deletes files and raw mail, a person's data is written and presigned under exports/.
    expect(actions('functions/jobs/handler.ts')).toEqual(['s3:DeleteObject', 's3:GetObject', 's3:PutObject']);
    // Deletes only ever under attachments/ (and, for an erasure, the raw mail under inbound/): never an upload, never the whole bucket.
    for (const s of Object.values(grants)
      .flat()
      .filter((x) => [x.Action].flat().includes('s3:DeleteObject')))
      for (const r of [s.Resource].flat()) expect(JSON.stringify(r)).toMatch(/\/(attachments|inbound)\/\*"/);
    // Exactly the functions whose code reads the bucket are told its name.
    const told = Object.values(logged.findResources('AWS::Lambda::Function')).filter((f: any) => f.Properties.Environment?.Variables?.UPLOADS_BUCKET);
    expect(told.map((f: any) => f.Metadata[ENTRY_METADATA]).sort()).toEqual(entries);
  });

  it('can log object access with CloudTrail data events and scan uploads with GuardDuty Malware Protection instead', () => {
    scanned.hasResourceProperties('AWS::CloudTrail::Trail', {
      EventSelectors: [Match.objectLike({ IncludeManagementEvents: false, ReadWriteType: 'All', DataResources: [Match.objectLike({ Type: 'AWS::S3::Object' })] })],
    });
    scanned.hasResourceProperties('AWS::GuardDuty::MalwareProtectionPlan', {
      ProtectedResource: { S3Bucket: { BucketName: { Ref: uploadsBucketId(scanned) }, ObjectPrefixes: ['uploads/'] } },
      Actions: { Tagging: { Status: 'ENABLED' } },
    });
    expect(s3Grants(scanned)['functions/messages/handler.ts'].flatMap((s) => [s.Action].flat())).toContain('s3:GetObjectTagging');
    const messages = Object.values(scanned.findResources('AWS::Lambda::Function')).find((f: any) => f.Metadata[ENTRY_METADATA] === 'functions/messages/handler.ts') as any;
    expect(messages.Properties.Environment.Variables.UPLOADS_MALWARE_SCAN).toBe('1');
  });

  it('has no unacknowledged cdk-nag finding with CloudTrail and malware scanning on', () => {
    const assembly = scannedApp.synth();
    const reportFile = join(assembly.directory, 'validation-report.json');
    expect(existsSync(reportFile)).toBe(true);
    const nag = JSON.parse(readFileSync(reportFile, 'utf8')).pluginReports.find((p: { pluginName: string }) => p.pluginName === 'AwsSolutions');
    expect(nag.violations).toEqual([]);
  }, 60_000);
});
