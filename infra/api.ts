import { ArnFormat, Duration, Validations, type Stack } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKey,
  ApiKeySourceType,
  AuthorizationType,
  type CfnAuthorizer,
  EndpointType,
  IdentitySource,
  LambdaIntegration,
  LogGroupLogDestination,
  MethodLoggingLevel,
  RequestAuthorizer,
  ResponseType,
  RestApi,
  type UsagePlan,
} from 'aws-cdk-lib/aws-apigateway';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { CfnPermission } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { allRoutes, API_GROUPS, API_PREFIXES, AUTHORIZER, NOT_FOUND } from '#app/registry.ts';
import { PLAN_LIMITS, PLANS } from '#shared/auth/principal.ts';
import { MISSING_CREDENTIALS_MESSAGE } from '#shared/http/contract.ts';
import type { StageConfig } from './config.ts';
import type { Functions } from './functions.ts';
import { bundles } from './imports.ts';
import { nagAck } from './nag.ts';
import type { Pipeline } from './pipeline.ts';

/** The module that flushes the authorizer cache; functions whose bundles include it get its settings and grant. */
const AUTHORIZER_CACHE_MODULE = 'shared/auth/authorizer-cache.ts';

/** The API's one stage. A literal, not the Stage's Ref, wherever a function needs it (see the authorizer-cache flush below). */
export const API_STAGE = 'live';

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
export class Api {
  readonly api: RestApi;
  readonly usagePlans: Record<string, UsagePlan> = {};

  constructor(scope: Stack, props: { config: StageConfig; functions: Functions; pipeline: Pipeline }) {
    const { config, functions, pipeline } = props;
    const accessLogs = new LogGroup(scope, 'ApiAccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.api = new RestApi(scope, 'Api', {
      restApiName: `${scope.stackName}-api`,
      description: 'Support Desk: user management (/playbook/api/v1) and support desk (/helpdesk/api)',
      endpointTypes: [EndpointType.REGIONAL],
      apiKeySourceType: ApiKeySourceType.AUTHORIZER,
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
          allRoutes()
            .filter((r) => r.public)
            .map((r) => [`${r.path}/${r.method}`, { throttlingRateLimit: r.public!.rateLimit, throttlingBurstLimit: r.public!.burstLimit }]),
        ),
      },
    });

    const authorizerFn = functions.add({
      id: 'AuthorizerFunction',
      entry: AUTHORIZER.entry,
      description: 'REQUEST authorizer: API key or session token -> principal',
      // UpdateItem for an API key's last_used_at: one conditional write per key per hour (decisions §18).
      tableAccess: 'readUpdate',
      environment: { ANONYMOUS_USAGE_KEY: anonymousKeyValue(scope.stackName), AUTHORIZER_CACHE_TTL_SECONDS: String(config.authorizerCacheTtlSeconds) },
      reservedConcurrency: config.reservedConcurrency?.authorizer,
    });
    const authorizer = new RequestAuthorizer(scope, 'Authorizer', {
      handler: authorizerFn,
      identitySources: [IdentitySource.header('Authorization')],
      // Default 300 s: one authorizer invocation and one read saved per cached request; credential changes flush the
      // cache (below), so a revoked key or suspended user is still refused on the very next request (docs/infrastructure.md).
      resultsCacheTtl: Duration.seconds(config.authorizerCacheTtlSeconds),
    });
    // Without caching no identity source is required; dropping it makes API Gateway call the authorizer even when the
    // header is missing, so the 401 comes from our function in the envelope of the path's interface. (With caching
    // the header is the cache key, and API Gateway itself answers 401 to a request without it.)
    if (config.authorizerCacheTtlSeconds === 0) (authorizer.node.defaultChild as CfnAuthorizer).addPropertyDeletionOverride('IdentitySource');
    nagAck(this.api, 'COG4', 'Callers authenticate with our own API keys and session tokens through the REQUEST authorizer (decisions §1), not Cognito user pools.');
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

    for (const group of API_GROUPS) {
      const handler = functions.add({
        id: `Group-${group.name}`,
        entry: group.entry,
        description: `Endpoint group ${group.name}`,
        tableAccess: 'readWrite',
        environment: pipeline.sendEnv(group.sendsTo),
        reservedConcurrency: config.reservedConcurrency?.apiFunction,
      });
      pipeline.grantSends(handler, group.sendsTo);
      // One invoke permission per function for the API, not one per method (liveStageOnly below).
      const integration = new LambdaIntegration(handler, { scopePermissionToMethod: false });
      for (const route of group.routes) {
        const resource = this.api.root.resourceForPath(route.path);
        if (!route.public) {
          resource.addMethod(route.method, integration, { authorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true, operationName: route.operationId });
          continue;
        }
        // A public page: no authorizer, no API key (no usage plan meters it); its own throttle in the stage's method settings.
        const method = resource.addMethod(route.method, integration, { authorizationType: AuthorizationType.NONE, apiKeyRequired: false, operationName: route.operationId });
        nagAck(method, 'APIG4', 'A public page (RouteContract.public): no credentials by design; throttled on its own in the stage settings.');
        nagAck(method, 'COG4', 'A public page (RouteContract.public): no credentials by design.');
      }
    }

    // Credential changes (a key revoked, a user suspended, deleted or re-roled, a plan changed) flush the stage's
    // authorizer cache at once (shared/auth/authorizer-cache.ts), so they take effect on the next request. Those functions
    // hold the RestApi's Ref and the stage name as a literal: the RestApi resource itself depends on no function (its
    // methods, deployment and stage do), so this adds no cycle; the Stage's Ref would (stage -> deployment -> method ->
    // integration -> function). Synchronous in the request that makes the change, unlike a flusher behind a queue,
    // which would leave a window in which the old answer is still served. A flush that fails after retries is alarmed.
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

    // Unknown paths under each interface answer a JSON 404 in that interface's envelope.
    const notFound = new LambdaIntegration(functions.add({ id: 'NotFound', entry: NOT_FOUND.entry, description: 'JSON 404 for unknown routes', tableAccess: 'read' }), {
      scopePermissionToMethod: false,
    });
    for (const prefix of [...API_PREFIXES, '/helpdesk/api/v1']) {
      const catchAll = this.api.root.resourceForPath(prefix).addResource('{proxy+}').addMethod('ANY', notFound, { authorizationType: AuthorizationType.NONE, apiKeyRequired: false });
      nagAck(catchAll, 'APIG4', 'Catch-all for unknown paths: it only ever answers a 404 and reads nothing.');
    }
    // Each function's one API permission names the live stage: no test-invoke from the console (its stage is test-invoke-stage),
    // which is not a way in for production traffic. (A permission per method would cost ~85 of the 500 resources a stack may hold.)
    for (const permission of this.api.node.children) {
      if (permission instanceof CfnPermission) permission.sourceArn = this.api.arnForExecuteApi('*', '/*', this.api.deploymentStage.stageName);
    }
    this.gatewayResponses(config);
    this.plans(scope);
  }

  /** API Gateway's own answers (no route, throttled, authorizer down, no credentials) in the envelopes the functions use. */
  private gatewayResponses(config: StageConfig) {
    const json = { 'application/json': '{"error":{"code":"resource_not_found","message":"No such route"}}' };
    this.api.addGatewayResponse('MissingToken', { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', templates: json });
    this.api.addGatewayResponse('Throttled', {
      type: ResponseType.THROTTLED,
      statusCode: '429',
      templates: { 'application/json': '{"error":{"code":"rate_limit_exceeded","message":"Too many requests"}}' },
    });
    this.api.addGatewayResponse('Default4xx', { type: ResponseType.DEFAULT_4XX, templates: { 'application/json': '{"error":{"code":"bad_request","message":$context.error.messageString}}' } });
    // With the cache on, the authorizer fails (nothing cached) when the store is throttled: answer that as a retryable 503.
    this.api.addGatewayResponse('AuthorizerUnavailable', {
      type: ResponseType.AUTHORIZER_FAILURE,
      statusCode: '503',
      responseHeaders: { 'Retry-After': "'1'" },
      // In the envelope of the path's interface, as the functions answer a 503 (a gateway response knows the resource path).
      templates: {
        'application/json': [
          "#if($context.resourcePath.startsWith('/playbook'))",
          '{"error":{"code":"service_unavailable","message":"The service is temporarily overloaded; retry shortly"}}',
          '#else',
          '{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"The service is temporarily overloaded; retry shortly"}}',
          '#end',
        ].join('\n'),
      },
    });
    if (config.authorizerCacheTtlSeconds > 0) {
      // With the cache, the Authorization header is the identity source: API Gateway answers a request without it
      // itself, before the authorizer, in the envelope of the path's interface, as the functions answer a 401 (local/gateway.ts).
      this.api.addGatewayResponse('MissingCredentials', {
        type: ResponseType.UNAUTHORIZED,
        statusCode: '401',
        templates: {
          'application/json': [
            "#if($context.resourcePath.startsWith('/playbook'))",
            '{"error":{"code":"unauthorized","message":"%s"}}',
            '#else',
            '{"success":false,"error":{"code":"UNAUTHORIZED","message":"%s"}}',
            '#end',
          ]
            .join('\n')
            .replaceAll('%s', MISSING_CREDENTIALS_MESSAGE),
        },
      });
    }
    this.api.addGatewayResponse('Default5xx', { type: ResponseType.DEFAULT_5XX, templates: { 'application/json': '{"error":{"code":"internal_error","message":"Internal error"}}' } });
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
