import { ArnFormat, CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
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
import { Alarm, ComparisonOperator, Dashboard, GraphWidget, MathExpression, Metric, TreatMissingData, type IMetric } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction, SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { type CfnFunction, CfnPermission, FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Topic, type ITopic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import { API_GROUPS, API_PREFIXES, AUTHORIZER, NOT_FOUND } from '#app/registry.ts';
import { MISSING_CREDENTIALS_MESSAGE } from '#shared/http/contract.ts';
import { PLAN_LIMITS, PLANS } from '#shared/auth/principal.ts';
import { ALL_GSIS, COUNTER_TABLE, gsiKeys, OUTBOX_INDEX, STREAM_VIEW, TABLE_KEYS, TTL_ATTRIBUTE } from '#shared/db/table-definition.ts';
import { METRICS } from '#shared/events/metrics.ts';
import { metricDimensions } from '#shared/service.ts';
import { BUS_MESSAGE_GROUP, DEFAULT_MAX_CONCURRENCY, MESSAGE_RETENTION_SECONDS, OLDEST_MESSAGE_ALARM_SECONDS, OUTBOX_PUBLISHER, QUEUES, RULES, SCHEDULES, type QueueName } from '#app/topology.ts';
import type { StageConfig } from './config.ts';
import { BusSubscribers } from './bus-subscribers.ts';
import { bundles } from './imports.ts';
import { ServiceFunction } from './service-function.ts';
import { checkFunctionSettings } from './settings.ts';
import { OBJECT_STORE_MODULE, Uploads } from './uploads.ts';

/** The module that flushes the authorizer cache; functions whose bundles include it get its settings and grant. */
const AUTHORIZER_CACHE_MODULE = 'shared/auth/authorizer-cache.ts';
/** The rate limiter; functions whose bundles include it get the counters table and UpdateItem on it. */
const RATE_LIMITER_MODULE = 'shared/ratelimit/limiter.ts';
/** Audits (decisions §15); functions whose bundles write them are told the stage's retention. */
const AUDIT_MODULE = 'shared/audits/repository.ts';

export interface SupportDeskStackProps extends StackProps {
  /** The stage's typed settings (infra/config.ts). */
  config: StageConfig;
}

/** Acknowledge a cdk-nag AwsSolutions finding on a construct, with the reason it is accepted. */
const nagAck = (scope: IConstruct, rule: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });

/** The API's one stage. A literal, not the Stage's Ref, wherever a function needs it (see the authorizer-cache flush below). */
export const API_STAGE = 'live';

/** API Gateway usage-plan throttles per tier: the per-minute limit as a steady rate, a burst of the minute's worth (decisions §4). */
export const tierThrottle = (perMinute: number) => ({ rateLimit: Math.ceil(perMinute / 60), burstLimit: Math.min(perMinute, 5000) });

/**
 * The whole service: one table, the REST API built from the route table (one
 * function per endpoint group behind a REQUEST authorizer), usage plans per
 * tier, the event bus, and the outbox -> EventBridge -> SQS pipeline built
 * from the topology table.
 */
export class SupportDeskStack extends Stack {
  readonly table: Table;
  /** Per-request counters that live for a window (rate limits): no stream, TTL (shared/db/table-definition.ts). */
  readonly counters: Table;
  readonly api: RestApi;
  readonly bus: EventBus;
  /** The schema registry, the subscribers' bus policy and the archive (infra/bus-subscribers.ts). */
  readonly subscribers: BusSubscribers;
  readonly usagePlans: Record<string, UsagePlan> = {};
  /** The bucket of uploads and attachments (infra/uploads.ts). */
  readonly uploads: Uploads;

  /** Every function of the stack, for the per-function alarms and the dashboard. */
  private readonly functions: Array<{ name: string; entry: string; fn: NodejsFunction }> = [];

  constructor(scope: Construct, id: string, props: SupportDeskStackProps) {
    super(scope, id, { ...props, env: { account: props.config.account, region: props.config.region, ...props.env } });
    const { config } = props;

    // --- Data: one table, same definition as the local stack (shared/db/table-definition.ts).
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType[STREAM_VIEW],
      timeToLiveAttribute: TTL_ATTRIBUTE,
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Keys-only view indexes beyond config.viewIndexes are left for a later deploy (one GSI per CloudFormation update).
    const views = ALL_GSIS.filter((g) => g.projection === 'KEYS_ONLY').slice(config.viewIndexes);
    for (const g of ALL_GSIS.filter((x) => !views.includes(x))) {
      const k = gsiKeys(g.name);
      this.table.addGlobalSecondaryIndex({
        indexName: g.name,
        partitionKey: { name: k.partitionKey, type: AttributeType.STRING },
        sortKey: { name: k.sortKey, type: AttributeType.STRING },
        projectionType: g.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL,
      });
    }
    // The sweeper's work list: write-sharded pending partitions, keys only (it fetches the items it publishes).
    this.table.addGlobalSecondaryIndex({
      indexName: OUTBOX_INDEX.name,
      partitionKey: { name: OUTBOX_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: OUTBOX_INDEX.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });

    // Rate-limit windows: one UpdateItem per API request, kept off the main table's stream (the outbox publisher's
    // shards carry events only). Items expire by TTL a minute after their window; nothing to back up or retain.
    this.counters = new Table(this, 'Counters', {
      partitionKey: { name: COUNTER_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: COUNTER_TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: COUNTER_TABLE.ttlAttribute,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    nagAck(this.counters, 'DDB3', 'Counters of the current minute only (rate-limit windows), expired by TTL; there is nothing to restore to a point in time.');

    const sessionSecret = new Secret(this, 'SessionSecret', {
      description: 'HS256 key for session tokens and cursor signatures',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    nagAck(
      sessionSecret,
      'SMG4',
      'A schedule needs a rotation Lambda and Secrets Manager hosts none for a generic key; an operator rotates with put-secret-value, functions still accept the previous version (docs/infrastructure.md, Rotating the session secret).',
    );

    this.bus = new EventBus(this, 'Bus', { eventBusName: `${this.stackName}-events` });
    // For subscribers: the schema registry, rules from the stage's subscriber accounts, the archive for replays.
    this.subscribers = new BusSubscribers(this, 'Subscribers', { bus: this.bus, config });

    // The provider's key stays in Secrets Manager; functions read it through the extension, like the session secret.
    const enrichmentSecret = config.enrichment.provider === 'http' ? Secret.fromSecretNameV2(this, 'EnrichmentApiKey', config.enrichment.apiKeySecretName) : undefined;
    const enrichmentEnv: Record<string, string> =
      config.enrichment.provider === 'http'
        ? { ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: config.enrichment.url, ENRICHMENT_API_KEY_SECRET_ID: config.enrichment.apiKeySecretName }
        : { ENRICHMENT_PROVIDER: 'none' };
    /**
     * A function of the stack. Table access (none / read / read-write as asked) and the session secret follow from
     * what its bundle imports, so each function holds exactly the grants its code can use.
     */
    // Uploads and attachments: one bucket; functions are told it and granted on it by what their bundles import.
    this.uploads = new Uploads(this, 'Uploads', { config });
    const fn = (id: string, entry: string, description: string, access: 'read' | 'readWrite', environment: Record<string, string> = {}, timeout?: Duration, reservedConcurrency?: number) => {
      const enriches = bundles(entry, 'shared/organizations/enrichment.ts');
      const storesObjects = bundles(entry, OBJECT_STORE_MODULE);
      const f = new ServiceFunction(this, id, {
        entry,
        description,
        table: this.table,
        tableAccess: bundles(entry, 'shared/db/client.ts') ? access : 'none',
        sessionSecret: bundles(entry, 'shared/auth/secret.ts') ? sessionSecret : undefined,
        secrets: enriches && enrichmentSecret ? [enrichmentSecret] : [],
        environment: { EVENT_BUS_NAME: this.bus.eventBusName, STACK_NAME: this.stackName, ...(enriches ? enrichmentEnv : {}), ...(storesObjects ? this.uploads.environment : {}), ...environment },
        timeout,
        memorySize: config.functionMemoryMb,
        logRetention: config.logRetentionDays as RetentionDays,
        reservedConcurrency,
      }).fn;
      this.uploads.grantTo(f, entry);
      // decisions §15: audits expire after the stage's retention, however they are written.
      if (bundles(entry, AUDIT_MODULE)) f.addEnvironment('AUDIT_RETENTION_DAYS', String(config.auditRetentionDays));
      if (bundles(entry, RATE_LIMITER_MODULE)) {
        f.addEnvironment('RATE_LIMIT_TABLE_NAME', this.counters.tableName);
        this.counters.grant(f, 'dynamodb:UpdateItem');
      }
      this.functions.push({ name: id, entry, fn: f });
      return f;
    };

    // --- Queues and rules of the pipeline (app/topology.ts).
    const queues = {} as Record<QueueName, Queue>;
    const dlqs: Queue[] = [];
    for (const q of QUEUES) {
      const dlq = new Queue(this, `${q.name}-dlq`, { retentionPeriod: Duration.seconds(MESSAGE_RETENTION_SECONDS), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
      dlqs.push(dlq);
      queues[q.name] = new Queue(this, q.name, {
        visibilityTimeout: Duration.seconds(q.visibilityTimeoutSeconds),
        retentionPeriod: Duration.seconds(MESSAGE_RETENTION_SECONDS),
        encryption: QueueEncryption.SQS_MANAGED,
        enforceSSL: true,
        deadLetterQueue: { queue: dlq, maxReceiveCount: q.maxReceiveCount },
      });
      if (q.urlOutput) new CfnOutput(this, q.urlOutput, { value: queues[q.name].queueUrl });
    }
    /** Environment naming the queues a function sends to (each row's `sendsTo`). */
    const sendEnv = (sendsTo: readonly QueueName[] = []) => Object.fromEntries(sendsTo.map((name) => [QUEUES.find((q) => q.name === name)!.urlEnv!, queues[name].queueUrl]));
    const grantSends = (fnc: IGrantable, sendsTo: readonly QueueName[] = []) => {
      for (const name of sendsTo) queues[name].grantSendMessages(fnc);
    };
    // An event EventBridge cannot hand to its target queue (after retrying for a day) is parked here, not dropped.
    const ruleTargetDlq = new Queue(this, 'rule-target-failures', { retentionPeriod: Duration.seconds(MESSAGE_RETENTION_SECONDS), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    nagAck(ruleTargetDlq, 'SQS3', "Dead-letter queue of the EventBridge rule targets itself; its depth and the rules' FailedInvocations are alarmed.");
    dlqs.push(ruleTargetDlq);
    const rules: Rule[] = [];
    for (const r of RULES) {
      rules.push(
        new Rule(this, `Rule-${r.name}`, {
          eventBus: this.bus,
          description: r.description,
          eventPattern: { source: [...r.pattern.source], ...(r.pattern['detail-type'] ? { detailType: [...r.pattern['detail-type']] } : {}) },
          targets: [
            new SqsQueue(queues[r.queue], {
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

    for (const q of QUEUES) {
      const dlq = dlqs[QUEUES.indexOf(q)];
      // A consumer that dead-letters explicitly (its row names dlqUrlEnv) gets its DLQ's URL and may send to it.
      const dlqEnv = q.dlqUrlEnv ? { [q.dlqUrlEnv]: dlq.queueUrl } : {};
      const consumer = fn(
        `Consumer-${q.name}`,
        q.consumer,
        q.description,
        'readWrite',
        { ...sendEnv(q.sendsTo), ...dlqEnv, ...(q.sendsEmail ? { EMAIL_TRANSPORT: 'ses', EMAIL_FROM: config.emailFrom } : {}) },
        Duration.seconds(q.functionTimeoutSeconds),
      );
      consumer.addEventSource(new SqsEventSource(queues[q.name], { batchSize: q.batchSize, reportBatchItemFailures: true, maxConcurrency: q.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY }));
      // The consumer shortens a failed message's visibility (backoff) instead of waiting out the queue's timeout.
      queues[q.name].grant(consumer, 'sqs:ChangeMessageVisibility');
      grantSends(consumer, q.sendsTo);
      if (q.dlqUrlEnv) dlq.grantSendMessages(consumer);
      if (q.sendsEmail) {
        const identity = config.emailFrom.split('@').pop()!;
        consumer.addToRolePolicy(new PolicyStatement({ actions: ['ses:SendEmail'], resources: [this.formatArn({ service: 'ses', resource: 'identity', resourceName: identity })] }));
      }
    }

    // --- Outbox publisher (table stream) and its sweeper (schedule): no ticket event is lost.
    const publisherDlq = new Queue(this, 'outbox-publisher-failures', { retentionPeriod: Duration.days(14), encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true });
    nagAck(publisherDlq, 'SQS3', 'On-failure destination of the stream mapping, i.e. a dead-letter queue itself; its depth is alarmed, and the sweeper republishes from the table anyway.');
    dlqs.push(publisherDlq);
    const publisher = fn('OutboxPublisher', OUTBOX_PUBLISHER.consumer, 'Publishes outbox items from the table stream to EventBridge', 'readWrite', {}, Duration.seconds(60));
    publisher.addEventSource(
      new DynamoEventSource(this.table, {
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
    this.bus.grantPutEventsTo(publisher);
    const sweeper = fn(
      'OutboxSweeper',
      OUTBOX_PUBLISHER.sweeper,
      'Republishes outbox items the stream did not',
      'readWrite',
      { OUTBOX_SWEEP_AGE_SECONDS: String(OUTBOX_PUBLISHER.sweepAgeSeconds) },
      Duration.seconds(60),
    );
    this.bus.grantPutEventsTo(sweeper);
    new Rule(this, 'OutboxSweepSchedule', { schedule: Schedule.rate(Duration.minutes(OUTBOX_PUBLISHER.sweepScheduleMinutes)), targets: [new LambdaFunction(sweeper)] });

    // --- Scheduled jobs of the topology (one function and one schedule rule each).
    for (const s of SCHEDULES) {
      const job = fn(`Schedule-${s.name}`, s.entry, s.description, 'readWrite', sendEnv(s.sendsTo), Duration.seconds(s.functionTimeoutSeconds));
      grantSends(job, s.sendsTo);
      new Rule(this, `Schedule-${s.name}-rule`, { description: s.description, schedule: Schedule.rate(Duration.minutes(s.rateMinutes)), targets: [new LambdaFunction(job)] });
    }

    // --- API: REST, REQUEST authorizer, one function per endpoint group, from the route table.
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention: RetentionDays.THREE_MONTHS });
    this.api = new RestApi(this, 'Api', {
      restApiName: `${this.stackName}-api`,
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
      },
    });

    const authorizerFn = fn(
      'AuthorizerFunction',
      AUTHORIZER.entry,
      'REQUEST authorizer: API key or session token -> principal',
      'read',
      { ANONYMOUS_USAGE_KEY: this.anonymousKeyValue(), AUTHORIZER_CACHE_TTL_SECONDS: String(config.authorizerCacheTtlSeconds) },
      undefined,
      config.reservedConcurrency?.authorizer,
    );
    const authorizer = new RequestAuthorizer(this, 'Authorizer', {
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
      const handler = fn(`Group-${group.name}`, group.entry, `Endpoint group ${group.name}`, 'readWrite', sendEnv(group.sendsTo), undefined, config.reservedConcurrency?.apiFunction);
      grantSends(handler, group.sendsTo);
      // One invoke permission per function for the API, not one per method (liveStageOnly below).
      const integration = new LambdaIntegration(handler, { scopePermissionToMethod: false });
      for (const route of group.routes) {
        this.api.root
          .resourceForPath(route.path)
          .addMethod(route.method, integration, { authorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true, operationName: route.operationId });
      }
    }

    // Credential changes (a key revoked, a user suspended, deleted or re-roled, a plan changed) flush the stage's
    // authorizer cache at once (shared/auth/authorizer-cache.ts), so they take effect on the next request. Those functions
    // hold the RestApi's Ref and the stage name as a literal: the RestApi resource itself depends on no function (its
    // methods, deployment and stage do), so this adds no cycle; the Stage's Ref would (stage -> deployment -> method ->
    // integration -> function). Synchronous in the request that makes the change, unlike a flusher behind a queue,
    // which would leave a window in which the old answer is still served. A flush that fails after retries is alarmed.
    const flushArn = this.formatArn({
      service: 'apigateway',
      account: '',
      resource: '/restapis',
      resourceName: `${this.api.restApiId}/stages/${API_STAGE}/cache/authorizers`,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
    for (const { entry, fn: f } of this.functions) {
      if (!bundles(entry, AUTHORIZER_CACHE_MODULE)) continue;
      f.addEnvironment('AUTHORIZER_CACHE_REST_API_ID', this.api.restApiId);
      f.addEnvironment('AUTHORIZER_CACHE_STAGE', API_STAGE);
      f.addEnvironment('AUTHORIZER_CACHE_TTL_SECONDS', String(config.authorizerCacheTtlSeconds));
      f.addToRolePolicy(new PolicyStatement({ actions: ['apigateway:DELETE'], resources: [flushArn] }));
    }

    // Unknown paths under each interface answer a JSON 404 in that interface's envelope.
    const notFound = new LambdaIntegration(fn('NotFound', NOT_FOUND.entry, 'JSON 404 for unknown routes', 'read'), { scopePermissionToMethod: false });
    for (const prefix of [...API_PREFIXES, '/helpdesk/api/v1']) {
      const catchAll = this.api.root.resourceForPath(prefix).addResource('{proxy+}').addMethod('ANY', notFound, { authorizationType: AuthorizationType.NONE, apiKeyRequired: false });
      nagAck(catchAll, 'APIG4', 'Catch-all for unknown paths: it only ever answers a 404 and reads nothing.');
    }
    // Each function's one API permission names the live stage: no test-invoke from the console (its stage is test-invoke-stage),
    // which is not a way in for production traffic. (A permission per method would cost ~85 of the 500 resources a stack may hold.)
    for (const permission of this.api.node.children) {
      if (permission instanceof CfnPermission) permission.sourceArn = this.api.arnForExecuteApi('*', '/*', this.api.deploymentStage.stageName);
    }
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

    // --- Usage plans per tier (the outer guard; the exact per-minute count is the service's own, decisions §4).
    for (const plan of PLANS) {
      this.usagePlans[plan] = this.api.addUsagePlan(`Plan-${plan}`, {
        // Named by stack, so two stages in one account never share (or move keys between) each other's plans.
        name: `${this.stackName}-${plan}`,
        description: `${plan} accounts: ${PLAN_LIMITS[plan]} requests per minute`,
        throttle: tierThrottle(PLAN_LIMITS[plan]),
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }
    const anonymous = this.api.addUsagePlan('Plan-anonymous', {
      name: `${this.stackName}-anonymous`,
      description: 'Requests without valid credentials (they get a 401 from the function)',
      throttle: { rateLimit: 10, burstLimit: 20 },
      apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
    });
    anonymous.addApiKey(new ApiKey(this, 'AnonymousKey', { apiKeyName: `${this.stackName}-anonymous`, value: this.anonymousKeyValue(), enabled: true }));
    this.usagePlans.anonymous = anonymous;

    // --- Alarms: anything in a dead-letter queue, an outbox that stops draining, a publisher falling behind.
    for (const dlq of dlqs) {
      new Alarm(this, `${dlq.node.id}-depth`, {
        alarmDescription: `Messages in ${dlq.node.id}: deliveries or events need attention`,
        metric: dlq.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    new Alarm(this, 'OutboxAge', {
      alarmDescription: 'The oldest unpublished ticket event is over 5 minutes old',
      metric: new Metric({ namespace: 'SupportDesk', metricName: METRICS.outboxAge, dimensionsMap: metricDimensions(this.stackName), statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 300,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      // The sweeper reports every minute; silence means it is not running, and then nothing catches missed events.
      treatMissingData: TreatMissingData.BREACHING,
    });
    new Alarm(this, 'OutboxParked', {
      alarmDescription: 'The bus refused an event for good; it is parked in the outbox (npm run admin -- list-parked)',
      metric: new Metric({ namespace: 'SupportDesk', metricName: METRICS.outboxParked, dimensionsMap: metricDimensions(this.stackName), statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    new Alarm(this, 'AuthorizerCacheFlushFailed', {
      alarmDescription: 'A credential change could not flush the authorizer cache: revoked keys, suspended users, new roles or plans take up to the cache TTL to apply',
      metric: new Metric({ namespace: 'SupportDesk', metricName: METRICS.authorizerCacheFlushFailed, dimensionsMap: metricDimensions(this.stackName), statistic: 'Sum', period: Duration.minutes(5) }),
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    for (const rule of rules) {
      new Alarm(this, `${rule.node.id}-failed-invocations`, {
        alarmDescription: `EventBridge could not deliver events of ${rule.node.id} to its queue; they go to rule-target-failures`,
        metric: new Metric({
          namespace: 'AWS/Events',
          metricName: 'FailedInvocations',
          dimensionsMap: { RuleName: rule.ruleName, EventBusName: this.bus.eventBusName },
          statistic: 'Sum',
          period: Duration.minutes(5),
        }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }
    new Alarm(this, 'PublisherIteratorAge', {
      alarmDescription: 'The outbox publisher is more than a minute behind the table stream',
      metric: publisher.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 60_000,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    this.operations(config, queues, dlqs);

    // Every function carries the settings that the modules of its bundle declare (infra/settings.ts): one missing
    // fails the synth here, naming the function and the variable, instead of the function's cold start.
    for (const { name, entry, fn } of this.functions) {
      const environment = this.resolve((fn.node.defaultChild as CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined;
      checkFunctionSettings(name, entry, environment?.variables ?? {}, this.region);
    }

    // --- What the platform team and the admin CLI need.
    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    // The admin CLI's revoke-api-key and set-plan flush the authorizer cache with these (scripts/stack-outputs.ts).
    new CfnOutput(this, 'RestApiId', { value: this.api.restApiId });
    new CfnOutput(this, 'ApiStageName', { value: API_STAGE });
    new CfnOutput(this, 'AuthorizerCacheTtlSeconds', { value: String(config.authorizerCacheTtlSeconds) });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SessionSecretArn', { value: sessionSecret.secretArn });
    new CfnOutput(this, 'UploadsBucketName', { value: this.uploads.bucket.bucketName });
    new CfnOutput(this, 'EventBusName', { value: this.bus.eventBusName });
    new CfnOutput(this, 'EventBusArn', { value: this.bus.eventBusArn });
    new CfnOutput(this, 'EventArchiveArn', { value: this.subscribers.archive.archiveArn });
    new CfnOutput(this, 'EventSchemaRegistryName', { value: this.subscribers.registryName });
    for (const [plan, p] of Object.entries(this.usagePlans)) new CfnOutput(this, `UsagePlan-${plan}`, { value: p.usagePlanId });
  }

  /**
   * Paging and overview: every alarm of the stack notifies the stage's topic;
   * errors and throttles of every function (the authorizer above all), API 5XX
   * and p99 latency, the age of the oldest message of each queue, DynamoDB
   * throttles; and one dashboard with the same signals.
   */
  private operations(config: StageConfig, queues: Record<QueueName, Queue>, dlqs: Queue[]) {
    const topic: ITopic = config.alarms.topicArn
      ? Topic.fromTopicArn(this, 'AlarmTopic', config.alarms.topicArn)
      : new Topic(this, 'AlarmTopic', { topicName: `${this.stackName}-alarms`, enforceSSL: true });
    if (config.alarms.email) topic.addSubscription(new EmailSubscription(config.alarms.email));
    const alarm = (id: string, description: string, metric: IMetric, threshold: number, evaluationPeriods = 1, treatMissingData = TreatMissingData.NOT_BREACHING) =>
      new Alarm(this, id, {
        alarmName: `${this.stackName}-${id}`,
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        treatMissingData,
      });

    for (const { name, fn } of this.functions) {
      const authorizer = name === 'AuthorizerFunction';
      // Any authorizer error is an outage of the whole API; other functions page on a burst of errors.
      alarm(
        `${name}-errors`,
        `${name}: invocation errors${authorizer ? ' (every API call goes through the authorizer)' : ''}`,
        fn.metricErrors({ period: Duration.minutes(5), statistic: 'Sum' }),
        authorizer ? 0 : 4,
      );
      alarm(`${name}-throttles`, `${name}: Lambda throttled invocations`, fn.metricThrottles({ period: Duration.minutes(5), statistic: 'Sum' }), 0);
    }
    alarm('Api5xx', 'The API answered 5XX', this.api.metricServerError({ period: Duration.minutes(5), statistic: 'Sum' }), 4);
    alarm('ApiLatencyP99', 'API p99 latency above 3 s for 15 minutes', this.api.metricLatency({ period: Duration.minutes(5), statistic: 'p99' }), 3000, 3);
    for (const q of QUEUES) {
      const maxAgeSeconds = q.oldestMessageAlarmSeconds ?? OLDEST_MESSAGE_ALARM_SECONDS;
      alarm(
        `${q.name}-oldest-message`,
        `${q.name}: the oldest message waits longer than ${maxAgeSeconds / 60} minutes`,
        queues[q.name].metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5), statistic: 'Maximum' }),
        maxAgeSeconds,
      );
    }
    const throttles = new MathExpression({
      expression: 'r + w',
      usingMetrics: { r: this.table.metric('ReadThrottleEvents', { statistic: 'Sum' }), w: this.table.metric('WriteThrottleEvents', { statistic: 'Sum' }) },
      period: Duration.minutes(5),
      label: 'DynamoDB throttle events',
    });
    alarm('TableThrottles', 'DynamoDB throttled reads or writes (the API answers 503 meanwhile)', throttles, 0);

    for (const node of this.node.findAll()) if (node instanceof Alarm) node.addAlarmAction(new SnsAction(topic));

    const fnMetrics = (m: (f: NodejsFunction) => IMetric) => this.functions.map(({ fn }) => m(fn));
    new Dashboard(this, 'Dashboard', {
      dashboardName: `${this.stackName}-overview`,
      widgets: [
        [
          new GraphWidget({
            title: 'API requests and 5XX',
            left: [this.api.metricCount({ period: Duration.minutes(1) })],
            right: [this.api.metricServerError({ period: Duration.minutes(1) }), this.api.metricClientError({ period: Duration.minutes(1) })],
          }),
          new GraphWidget({ title: 'API latency p50 / p99 (ms)', left: [this.api.metricLatency({ statistic: 'p50' }), this.api.metricLatency({ statistic: 'p99' })] }),
        ],
        [
          new GraphWidget({ title: 'Function errors', left: fnMetrics((f) => f.metricErrors({ period: Duration.minutes(1) })), width: 12 }),
          new GraphWidget({ title: 'Function throttles', left: fnMetrics((f) => f.metricThrottles({ period: Duration.minutes(1) })), width: 12 }),
        ],
        [
          new GraphWidget({ title: 'Queue: oldest message (s)', left: QUEUES.map((q) => queues[q.name].metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1) })), width: 12 }),
          new GraphWidget({ title: 'Dead-letter queues: messages', left: dlqs.map((d) => d.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1) })), width: 12 }),
        ],
        [
          new GraphWidget({
            title: 'Outbox: oldest pending event (s)',
            left: [new Metric({ namespace: 'SupportDesk', metricName: METRICS.outboxAge, dimensionsMap: metricDimensions(this.stackName), statistic: 'Maximum' })],
          }),
          new GraphWidget({ title: 'DynamoDB throttles', left: [throttles] }),
        ],
      ],
    });
  }

  /**
   * The anonymous usage key only names the throttle bucket of unauthenticated
   * requests (clients never send API Gateway keys: the source is the authorizer),
   * so a stable, non-secret value per stack is enough.
   */
  private anonymousKeyValue(): string {
    return `anonymous-${this.stackName}-usage-key`.padEnd(30, '0');
  }
}
