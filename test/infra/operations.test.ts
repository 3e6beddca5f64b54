import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_GROUPS } from '#app/registry.ts';
import { stageConfig } from '../../infra/config.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { QUEUES } from '#app/topology.ts';
import { testStage } from '../support/stage.ts';
import { withParts } from '../support/template.ts';

// Two stages in one app (bundling skipped: the real synth in CI covers it), as a platform team deploys dev and prod.
let dev: Template;
let prod: Template;
/** Each stage's nested stack of the alarms without a name (infra/operations.ts). */
let devUnnamed: Template;
let prodUnnamed: Template;
beforeAll(() => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const devStack = new SupportDeskStack(app, 'SupportDesk-dev', { config: testStage({ stage: 'dev' }) });
  const prodStack = new SupportDeskStack(app, 'SupportDesk-prod', {
    config: testStage({
      stage: 'prod',
      alarms: { topicArn: 'arn:aws:sns:eu-west-1:123456789012:pager' },
      reservedConcurrency: { authorizer: 200, apiFunction: 50 },
      authorizerCacheTtlSeconds: 30,
      enrichment: { provider: 'http', url: 'https://companies.example/v1', apiKeySecretName: 'sd/prod/enrichment' },
    }),
  });
  // The features' nested stacks (infra/parts.ts) folded in: their functions and queues have their alarms there.
  dev = withParts(devStack);
  prod = withParts(prodStack);
  devUnnamed = Template.fromStack(devStack.alarms);
  prodUnnamed = Template.fromStack(prodStack.alarms);
}, 120_000);

const functionsOf = (t: Template) => Object.entries(t.findResources('AWS::Lambda::Function')) as Array<[string, { Properties: Record<string, any> }]>;
const fnNamed = (t: Template, prefix: string) =>
  functionsOf(t)
    .filter(([id]) => id.startsWith(prefix))
    .map(([, f]) => f.Properties);
const policyText = (t: Template, prefix: string) => JSON.stringify(Object.entries(t.findResources('AWS::IAM::Policy')).filter(([id]) => id.startsWith(prefix)));

describe('stages and operations', () => {
  it('refuses an incomplete stage: account, region, email sender and an alarm destination are required', () => {
    expect(() => stageConfig({ stage: 'x1', region: 'eu-west-1', alarms: { email: 'a@b.example' } })).toThrow(/account.*emailFrom/s);
    expect(() => stageConfig({ stage: 'x1', account: '123456789012', region: 'eu-west-1', emailFrom: 'a@b.example', alarms: {} })).toThrow(/alarms/);
  });

  it('names every named resource by its stack, so two stages in one account share nothing', () => {
    const names = (t: Template) =>
      [
        ...Object.values(t.findResources('AWS::ApiGateway::UsagePlan')).map((r) => r.Properties.UsagePlanName),
        ...Object.values(t.findResources('AWS::CloudWatch::Alarm'))
          .map((r) => r.Properties.AlarmName)
          .filter(Boolean),
        ...Object.values(t.findResources('AWS::CloudWatch::Dashboard')).map((r) => r.Properties.DashboardName),
        ...Object.values(t.findResources('AWS::Events::EventBus')).map((r) => JSON.stringify(r.Properties.Name)),
        ...Object.values(t.findResources('AWS::ApiGateway::ApiKey')).map((r) => r.Properties.Name),
      ].filter((n): n is string => typeof n === 'string');
    const devNames = names(dev);
    expect(devNames.length).toBeGreaterThan(20);
    expect(devNames.filter((n) => names(prod).includes(n))).toEqual([]);
    expect(devNames.every((n) => n.includes('SupportDesk-dev'))).toBe(true);
  });

  it('sends every alarm to the stage topic, and alarms on function errors and throttles, API 5XX and latency, queue age and table throttles', () => {
    const alarms = Object.values(dev.findResources('AWS::CloudWatch::Alarm'));
    const unnamed = Object.values(devUnnamed.findResources('AWS::CloudWatch::Alarm'));
    for (const a of [...alarms, ...unnamed]) expect(a.Properties.AlarmActions, a.Properties.AlarmDescription).toHaveLength(1);
    const prodAlarms = [...Object.values(prod.findResources('AWS::CloudWatch::Alarm')), ...Object.values(prodUnnamed.findResources('AWS::CloudWatch::Alarm'))];
    for (const a of prodAlarms) expect(a.Properties.AlarmActions).toEqual(['arn:aws:sns:eu-west-1:123456789012:pager']);
    // Alarms without a name live in the nested stack, named ones in the service's stack (moving a named one would clash with itself).
    expect(unnamed.length).toBeGreaterThan(20);
    for (const a of unnamed) expect(a.Properties.AlarmName).toBeUndefined();
    for (const a of alarms) expect(a.Properties.AlarmName).toEqual(expect.stringContaining('SupportDesk-dev-'));
    dev.resourceCountIs('AWS::SNS::Topic', 1);
    dev.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'oncall@test.example' });
    prod.resourceCountIs('AWS::SNS::Topic', 0);

    const byName = (suffix: string) => alarms.filter((a) => String(a.Properties.AlarmName).endsWith(suffix));
    // One alarm a function over its errors and throttles: any throttle pages, and any authorizer error.
    const authorizer = byName('AuthorizerFunction-failing')[0].Properties;
    expect(authorizer).toMatchObject({ Threshold: 0 });
    expect(authorizer.Metrics.map((m: { Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string } } }) => m.Expression ?? m.MetricStat!.Metric.MetricName).sort()).toEqual([
      'Errors',
      'Throttles',
      'errors + throttles',
    ]);
    const other = alarms.find((a) => String(a.Properties.AlarmName).endsWith('-failing') && !String(a.Properties.AlarmName).includes('Authorizer'))!.Properties;
    expect(other).toMatchObject({ Threshold: 4 });
    expect(other.Metrics.find((m: { Expression?: string }) => m.Expression).Expression).toBe('errors + 5 * throttles');
    expect(byName('-failing').length).toBe(functionsOf(dev).length);
    expect(byName('Api5xx')[0].Properties.MetricName).toBe('5XXError');
    expect(byName('ApiLatencyP99')[0].Properties.ExtendedStatistic).toBe('p99');
    for (const q of QUEUES) expect(byName(`${q.name}-oldest-message`)[0].Properties.MetricName).toBe('ApproximateAgeOfOldestMessage');
    expect(byName('TableThrottles')).toHaveLength(1);
    dev.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    // The outbox-age alarm reads its own stack's metric.
    devUnnamed.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'OutboxOldestPendingAgeSeconds',
      Dimensions: Match.arrayWith([
        { Name: 'Stack', Value: 'SupportDesk-dev' },
        { Name: 'service', Value: 'support-desk' },
      ]),
    });
  });

  it('reserves concurrency for the authorizer and the API functions when the stage asks', () => {
    expect(fnNamed(prod, 'AuthorizerFunction')[0].ReservedConcurrentExecutions).toBe(200);
    const groups = API_GROUPS.map((g) => fnNamed(prod, `Groupx${g.name}`.replace('x', '')));
    for (const g of groups) expect(g[0]?.ReservedConcurrentExecutions).toBe(50);
    expect(fnNamed(dev, 'AuthorizerFunction')[0].ReservedConcurrentExecutions).toBeUndefined();
    const [api] = Object.values(prod.findResources('AWS::ApiGateway::RestApi'));
    expect(api.Properties.Body.components.securitySchemes.authorizer['x-amazon-apigateway-authorizer']).toMatchObject({
      authorizerResultTtlInSeconds: 30,
      identitySource: 'method.request.header.Authorization',
    });
  });

  it('grants each function only what its code uses', () => {
    // The 404 function touches neither the table nor the session secret.
    expect(fnNamed(dev, 'NotFound')[0].Environment.Variables.TABLE_NAME).toBeUndefined();
    expect(policyText(dev, 'NotFound')).not.toMatch(/dynamodb|secretsmanager/);
    // Consumers read no session secret; the authorizer does, and reads the table with UpdateItem only (an API key's hourly last use).
    expect(policyText(dev, 'Consumerwebhookdelivery')).not.toMatch(/secretsmanager/);
    expect(policyText(dev, 'AuthorizerFunction')).toMatch(/secretsmanager:GetSecretValue/);
    expect(policyText(dev, 'AuthorizerFunction')).toMatch(/dynamodb:UpdateItem/);
    expect(policyText(dev, 'AuthorizerFunction')).not.toMatch(/dynamodb:(PutItem|DeleteItem|BatchWriteItem)/);
    // Logs only to the function's own log group: no AWSLambdaBasicExecutionRole anywhere.
    for (const role of Object.values(dev.findResources('AWS::IAM::Role'))) expect(JSON.stringify(role.Properties.ManagedPolicyArns ?? [])).not.toMatch(/AWSLambdaBasicExecutionRole/);
    // The enrichment key is read from Secrets Manager, by the functions that enrich, and never put in the template.
    expect(JSON.stringify(prod.toJSON())).not.toMatch(/apiKey"?:\s*"[^"]/i);
    expect(fnNamed(prod, 'Consumerenrichment')[0].Environment.Variables).toMatchObject({ ENRICHMENT_PROVIDER: 'http', ENRICHMENT_API_KEY_SECRET_ID: 'sd/prod/enrichment' });
    expect(fnNamed(prod, 'Grouporganizations')[0].Environment.Variables.ENRICHMENT_PROVIDER).toBe('http');
    // API methods cannot be test-invoked from the console.
    expect(JSON.stringify(dev.findResources('AWS::Lambda::Permission'))).not.toMatch(/test-invoke-stage/);
    dev.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ NODE_OPTIONS: '--enable-source-maps' }) } });
  });
});
