import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, API_GROUPS } from '#app/registry.ts';
import { PLAN_LIMITS } from '#shared/auth/principal.ts';
import { ALL_GSIS, OUTBOX_INDEX } from '#shared/db/table-definition.ts';
import { RULES } from '#app/bus-rules.ts';
import { QUEUES, SCHEDULES } from '#app/topology.ts';
import { SupportDeskStack, tierThrottle } from '../../infra/stack.ts';
import { testStage } from '../support/stage.ts';
import { withParts } from '../support/template.ts';

// One synth per file, without esbuild (bundling is covered by the real `cdk synth` in CI).
let app: App;
let template: Template;
/** The nested stack of the alarms without a name (infra/operations.ts). */
let unnamedAlarms: Template;
beforeAll(() => {
  app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SupportDeskStack(app, 'Test', { config: testStage() });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  template = withParts(stack);
  unnamedAlarms = Template.fromStack(stack.alarms);
}, 180_000);

describe('CDK app', () => {
  it('has one table with the shared key schema, GSIs, stream, TTL, PITR and deletion protection', () => {
    // The main table and the counters table.
    template.resourceCountIs('AWS::DynamoDB::Table', 2);
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      DeletionProtectionEnabled: true,
      GlobalSecondaryIndexes: [
        ...ALL_GSIS.map((g) =>
          Match.objectLike({
            IndexName: g.name,
            KeySchema: [
              { AttributeName: `${g.name}pk`, KeyType: 'HASH' },
              { AttributeName: `${g.name}sk`, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: g.projection },
          }),
        ),
        Match.objectLike({ IndexName: OUTBOX_INDEX.name }),
      ],
    });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain' });
  });

  it('keeps rate-limit counters in a second table without a stream, with TTL, given to the functions that count', () => {
    const counters = Object.entries(template.findResources('AWS::DynamoDB::Table')).filter(([, r]) => !r.Properties.StreamSpecification);
    expect(counters).toHaveLength(1);
    const [counterId, counter] = counters[0];
    expect(counter.Properties).toMatchObject({ TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true }, BillingMode: 'PAY_PER_REQUEST' });
    expect(counter.Properties.GlobalSecondaryIndexes).toBeUndefined();
    const fns = Object.values(template.findResources('AWS::Lambda::Function')).filter((f) => f.Properties.Environment?.Variables?.RATE_LIMIT_TABLE_NAME);
    expect(fns.length).toBe(API_GROUPS.length);
    for (const f of fns) expect(f.Properties.Environment.Variables.RATE_LIMIT_TABLE_NAME).toEqual({ Ref: counterId });
  });

  it('caches the authorizer answer 300 s by default, and gives the functions that change credentials what they need to flush it', () => {
    const [[apiId, api]] = Object.entries(template.findResources('AWS::ApiGateway::RestApi'));
    const { securitySchemes } = api.Properties.Body.components;
    expect(securitySchemes.authorizer['x-amazon-apigateway-authorizer']).toMatchObject({ authorizerResultTtlInSeconds: 300, identitySource: 'method.request.header.Authorization' });
    expect(api.Properties.Body['x-amazon-apigateway-gateway-responses'].UNAUTHORIZED).toMatchObject({ statusCode: '401' });
    const flushers = Object.entries(template.findResources('AWS::Lambda::Function')).filter(([, f]) => f.Properties.Environment?.Variables?.AUTHORIZER_CACHE_REST_API_ID);
    expect(flushers.map(([, f]) => f.Metadata['SupportDesk::Entry'])).toContain('functions/users/handler.ts');
    for (const [, f] of flushers)
      expect(f.Properties.Environment.Variables).toMatchObject({ AUTHORIZER_CACHE_REST_API_ID: { Ref: apiId }, AUTHORIZER_CACHE_STAGE: 'live', AUTHORIZER_CACHE_TTL_SECONDS: '300' });
    const policies = JSON.stringify(template.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('/cache/authorizers');
    unnamedAlarms.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'AuthorizerCacheFlushFailed', Threshold: 0 });
  });

  it('has a usage plan per tier whose throttle matches its per-minute limit, plus the anonymous plan', () => {
    for (const [plan, perMinute] of Object.entries(PLAN_LIMITS)) {
      template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
        UsagePlanName: `Test-${plan}`,
        Throttle: { RateLimit: tierThrottle(perMinute).rateLimit, BurstLimit: tierThrottle(perMinute).burstLimit },
      });
    }
    expect(tierThrottle(100)).toEqual({ rateLimit: 2, burstLimit: 100 });
    template.hasResourceProperties('AWS::ApiGateway::UsagePlan', { UsagePlanName: 'Test-anonymous' });
    template.resourceCountIs('AWS::ApiGateway::UsagePlanKey', 1);
  });

  it('creates one function per endpoint group, the authorizer, the 404 function, each consumer, the publisher and the sweeper', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    expect(Object.keys(functions)).toHaveLength(API_GROUPS.length + 2 + QUEUES.length + 2 + SCHEDULES.length);
    for (const f of Object.values(functions)) {
      expect(f.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
      expect(f.Properties.Environment.Variables.STACK_NAME).toBe('Test');
    }
  });

  it('wires every route through the REQUEST authorizer with per-account usage-plan keys', () => {
    const [api] = Object.values(template.findResources('AWS::ApiGateway::RestApi'));
    const body = api.Properties.Body;
    expect(body['x-amazon-apigateway-api-key-source']).toBe('AUTHORIZER');
    expect(body.components.securitySchemes.authorizer['x-amazon-apigateway-authorizer'].type).toBe('request');
    for (const route of allRoutes()) {
      const op = body.paths[route.path][route.method.toLowerCase()];
      expect(op.operationId).toBe(route.operationId);
      expect(op.security, route.operationId).toEqual(route.public ? [] : [{ authorizer: [] }, { api_key: [] }]);
    }
    expect(body['x-amazon-apigateway-gateway-responses'].MISSING_AUTHENTICATION_TOKEN).toMatchObject({ statusCode: '404' });
  });

  it('uses one path-variable name per level of the route table (API Gateway refuses sibling variables)', () => {
    const variables = new Map<string, Set<string>>();
    for (const route of allRoutes()) {
      const segments = route.path.split('/').filter(Boolean);
      segments.forEach((seg, i) => {
        if (!seg.startsWith('{')) return;
        const parent = segments.slice(0, i).join('/');
        variables.set(parent, (variables.get(parent) ?? new Set()).add(seg));
      });
    }
    for (const [parent, names] of variables) expect([...names], parent).toHaveLength(1);
  });

  it('builds the event pipeline from the topology: a rule per route, a queue and DLQ per consumer, the stream publisher', () => {
    template.resourceCountIs('AWS::Events::EventBus', 1);
    for (const r of RULES) template.hasResourceProperties('AWS::Events::Rule', { EventPattern: Match.objectLike({ source: [...r.pattern.source] }) });
    for (const q of QUEUES) template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { BatchSize: q.batchSize, FunctionResponseTypes: ['ReportBatchItemFailures'] });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { StartingPosition: 'LATEST', BisectBatchOnFunctionError: true, FilterCriteria: Match.anyValue() });
    template.hasResourceProperties('AWS::Events::Rule', { ScheduleExpression: 'rate(1 minute)' });
    expect(Object.keys(template.findResources('AWS::CloudWatch::Alarm')).length).toBeGreaterThanOrEqual(QUEUES.length + 3);
  });

  it('has no unacknowledged cdk-nag AwsSolutions finding, and every acknowledgment gives a reason', () => {
    const assembly = app.synth();
    const reportFile = join(assembly.directory, 'validation-report.json');
    expect(existsSync(reportFile)).toBe(true);
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    const nag = report.pluginReports.find((p: { pluginName: string }) => p.pluginName === 'AwsSolutions');
    expect(nag.violations).toEqual([]);
    expect(nag.conclusion).toBe('success');
    for (const s of nag.suppressedViolations) expect(s.reason.length).toBeGreaterThan(30);
  }, 60_000);
});
