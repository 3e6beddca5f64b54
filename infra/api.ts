import { ArnFormat, Aws, Validations, type Stack } from 'aws-cdk-lib';
import { AccessLogFormat, ApiDefinition, ApiKey, EndpointType, LogGroupLogDestination, MethodLoggingLevel, SpecRestApi, type UsagePlan } from 'aws-cdk-lib/aws-apigateway';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ApiGroup, API_GROUPS, API_PREFIXES, AUTHORIZER, NOT_FOUND } from '#app/registry.ts';
import { openApiDocument } from '#app/openapi/document.ts';
import { PLAN_LIMITS, PLANS } from '#shared/auth/principal.ts';
import { apiDefinition, invokeUri, NOT_FOUND_TARGET, stageVariableOf } from './api-definition.ts';
import type { StageConfig } from './config.ts';
import type { Functions } from './functions.ts';
import { bundles } from './imports.ts';
import { nagAck } from './nag.ts';
import type { Pipeline } from './pipeline.ts';
import type { Parts } from './parts.ts';

/** The module that flushes the authorizer cache; functions whose bundles include it get its settings and grant. */
const AUTHORIZER_CACHE_MODULE = 'shared/auth/authorizer-cache.ts';

/** The API's one stage. A literal, not the Stage's Ref, wherever a function needs it (see the authorizer-cache flush below). */
export const API_STAGE = 'live';

/** The module that builds survey links; functions whose bundles include it are told the API's public base URL. */
const SURVEY_LINK_MODULE = 'shared/satisfaction/survey.ts';

/** API Gateway usage-plan throttles per tier: the per-minute limit as a steady rate, a burst of the minute's worth (decisions §4). */
export const tierThrottle = (perMinute: number) => ({ rateLimit: Math.ceil(perMinute / 60), burstLimit: Math.min(perMinute, 5000) });

/**
 * The anonymous usage key only names the throttle bucket of unauthenticated
 * requests (clients never send API Gateway keys: the source is the authorizer),
 * so a stable, non-secret value per stack is enough.
 */
const anonymousKeyValue = (stackName: string) => `anonymous-${stackName}-usage-key`.padEnd(30, '0');

/**
 * The REST API from the route table (app/registry.ts): one function per
 * endpoint group behind a REQUEST authorizer, the authorizer-cache flush of
 * the functions that change credentials, 404s in each interface's envelope,
 * gateway responses, and usage plans per tier. Built in the stack's own scope,
 * so every resource keeps its logical id.
 */
/** The prefixes whose unknown paths answer 404 from the 404 function (the helpdesk's v1 too, below its unversioned prefix). */
export const CATCH_ALL_PREFIXES = [...API_PREFIXES, '/helpdesk/api/v1'] as const;

/**
 * The REST API, defined by the OpenAPI document of the route table (infra/api-definition.ts): one function per
 * endpoint group behind a REQUEST authorizer, the authorizer-cache flush of the functions that change credentials,
 * 404s in each interface's envelope, gateway responses, and usage plans per tier. API Gateway's resources, methods,
 * authorizer and gateway responses are the RestApi's Body, not resources of the template: a route adds none.
 * Built in the stack's own scope, so every resource keeps its logical id.
 */
export class Api {
  readonly api: SpecRestApi;
  readonly usagePlans: Record<string, UsagePlan> = {};

  /** `groups`: the route table (default app/registry.ts's; tests add a route). */
  constructor(scope: Stack, props: { config: StageConfig; functions: Functions; pipeline: Pipeline; parts: Parts; groups?: readonly ApiGroup[] }) {
    const { config, functions, pipeline, parts, groups = API_GROUPS } = props;
    const authorizerFn = functions.add({
      id: 'AuthorizerFunction',
      entry: AUTHORIZER.entry,
      description: 'REQUEST authorizer: API key or session token -> principal',
      // UpdateItem for an API key's last_used_at: one conditional write per key per hour (decisions §18).
      tableAccess: 'readUpdate',
      environment: { ANONYMOUS_USAGE_KEY: anonymousKeyValue(scope.stackName), AUTHORIZER_CACHE_TTL_SECONDS: String(config.authorizerCacheTtlSeconds) },
      reservedConcurrency: config.reservedConcurrency?.authorizer,
    });
    const targets = new Map<string, IFunction>([['authorizer', authorizerFn]]);
    for (const group of groups) {
      const handler = functions.add({
        id: `Group-${group.name}`,
        entry: group.entry,
        scope: parts.of(group.part),
        description: `Endpoint group ${group.name}`,
        tableAccess: 'readWrite',
        environment: pipeline.sendEnv(group.sendsTo),
        reservedConcurrency: config.reservedConcurrency?.apiFunction,
      });
      pipeline.grantSends(handler, group.sendsTo);
      targets.set(group.name, handler);
    }
    // Unknown paths under each interface answer a JSON 404 in that interface's envelope.
    targets.set(NOT_FOUND_TARGET, functions.add({ id: 'NotFound', entry: NOT_FOUND.entry, description: 'JSON 404 for unknown routes', tableAccess: 'read' }));

    const routes = groups.flatMap((g) => [...g.routes]);
    const accessLogs = new LogGroup(scope, 'ApiAccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.api = new SpecRestApi(scope, 'Api', {
      restApiName: `${scope.stackName}-api`,
      // Default mode (merge): the definition's paths replace the API's; the endpoint type set here is kept.
      apiDefinition: ApiDefinition.fromInline(
        apiDefinition({
          document: openApiDocument({ routes }),
          groups,
          prefixes: CATCH_ALL_PREFIXES,
          uri: (target) => invokeUri({ partition: Aws.PARTITION, region: Aws.REGION, account: Aws.ACCOUNT_ID }, stageVariableOf(target)),
          authorizerCacheTtlSeconds: config.authorizerCacheTtlSeconds,
        }),
      ),
      endpointTypes: [EndpointType.REGIONAL],
      cloudWatchRole: true,
      deployOptions: {
        stageName: API_STAGE,
        tracingEnabled: true,
        metricsEnabled: true,
        loggingLevel: MethodLoggingLevel.ERROR,
        accessLogDestination: new LogGroupLogDestination(accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
        // Stage-wide ceiling; per-tier limits come from the usage plans below.
        throttlingRateLimit: 2000,
        throttlingBurstLimit: 5000,
        // Public pages (RouteContract.public) have no usage plan: each is throttled on its own here.
        methodOptions: Object.fromEntries(
          routes.filter((r) => r.public).map((r) => [`${r.path}/${r.method}`, { throttlingRateLimit: r.public!.rateLimit, throttlingBurstLimit: r.public!.burstLimit }]),
        ),
        // The functions the definition's integrations and authorizer name (infra/api-definition.ts: why not their ARNs).
        variables: Object.fromEntries([...targets].map(([target, fn]) => [stageVariableOf(target), fn.functionName])),
      },
    });
    // The deployment's logical id is a hash of the RestApi's properties, the Body included (CDK's
    // LatestDeploymentResource): a changed route is a new deployment of the stage (test/infra/api.test.ts).

    // One invoke permission per function, not one per method: the group functions and the 404 function for any method
    // and path of the live stage (no test-invoke from the console: its stage is test-invoke-stage); the authorizer for the
    // API's authorizers. (A permission per method would cost ~100 of the 500 resources a stack may hold.)
    for (const [target, fn] of targets) {
      const sourceArn =
        target === 'authorizer'
          ? scope.formatArn({ service: 'execute-api', resource: this.api.restApiId, resourceName: 'authorizers/*', arnFormat: ArnFormat.SLASH_RESOURCE_NAME })
          : this.api.arnForExecuteApi('*', '/*', API_STAGE);
      fn.addPermission('ApiInvoke', { principal: new ServicePrincipal('apigateway.amazonaws.com'), sourceArn });
    }

    nagAck(
      this.api,
      'APIG2',
      "Every request is validated in the function by the zod contract, answering 400/422 in the interface's own envelope; API Gateway models would duplicate it with a different error shape.",
    );
    nagAck(this.api, 'APIG3', 'WAF web ACLs are attached by the platform team per environment (shared ACL in front of all APIs); usage plans and the per-account limit throttle here.');
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level role API Gateway needs to write execution logs; AWS-maintained and limited to CloudWatch Logs.',
    });

    // Credential changes (a key revoked, a user suspended, deleted or re-roled, a plan changed) flush the stage's
    // authorizer cache at once (shared/auth/authorizer-cache.ts), so they take effect on the next request. Those functions
    // hold the RestApi's Ref and the stage name as a literal: the RestApi depends on no function (its definition names them
    // by stage variables; the stage holds their names), so this adds no cycle; the Stage's Ref would (stage -> function).
    // Synchronous in the request that makes the change, unlike a flusher behind a queue, which would leave a window in
    // which the old answer is still served. A flush that fails after retries is alarmed.
    const flushArn = scope.formatArn({
      service: 'apigateway',
      account: '',
      resource: '/restapis',
      resourceName: `${this.api.restApiId}/stages/${API_STAGE}/cache/authorizers`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    for (const { entry, fn } of functions.all) {
      if (!bundles(entry, AUTHORIZER_CACHE_MODULE)) continue;
      fn.addEnvironment('AUTHORIZER_CACHE_REST_API_ID', this.api.restApiId);
      fn.addEnvironment('AUTHORIZER_CACHE_STAGE', API_STAGE);
      fn.addEnvironment('AUTHORIZER_CACHE_TTL_SECONDS', String(config.authorizerCacheTtlSeconds));
      fn.addToRolePolicy(new PolicyStatement({ actions: ['apigateway:DELETE'], resources: [flushArn] }));
    }

    // Survey links point at the API's own URL (the stage name a literal, so no function depends on the stage).
    for (const { entry, fn } of functions.all) {
      if (bundles(entry, SURVEY_LINK_MODULE)) fn.addEnvironment('PUBLIC_BASE_URL', `https://${this.api.restApiId}.execute-api.${scope.region}.${scope.urlSuffix}/${API_STAGE}`);
    }
    this.plans(scope);
  }

  /** Usage plans per tier: the outer guard; the exact per-minute count is the service's own (decisions §4). */
  private plans(scope: Stack) {
    for (const plan of PLANS) {
      this.usagePlans[plan] = this.api.addUsagePlan(`Plan-${plan}`, {
        // Named by stack, so two stages in one account never share (or move keys between) each other's plans.
        name: `${scope.stackName}-${plan}`,
        description: `${plan} accounts: ${PLAN_LIMITS[plan]} requests per minute`,
        throttle: tierThrottle(PLAN_LIMITS[plan]),
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }
    const anonymous = this.api.addUsagePlan('Plan-anonymous', {
      name: `${scope.stackName}-anonymous`,
      description: 'Requests without valid credentials (they get a 401 from the function)',
      throttle: { rateLimit: 10, burstLimit: 20 },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    anonymous.addApiKey(new ApiKey(scope, 'AnonymousKey', { apiKeyName: `${scope.stackName}-anonymous`, value: anonymousKeyValue(scope.stackName), enabled: true }));
    this.usagePlans.anonymous = anonymous;
  }
}
