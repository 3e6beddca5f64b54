import { CfnOutput, Duration, RemovalPolicy, Stack, Validations, type StackProps } from 'aws-cdk-lib';
import {
  AccessLogFormat,
  ApiKey,
  ApiKeySourceType,
  AuthorizationType,
  CfnAuthorizer,
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
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { AttributeType, BillingMode, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction, SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import { API_GROUPS, API_PREFIXES, AUTHORIZER, NOT_FOUND } from '../functions/registry.ts';
import { PLAN_LIMITS, PLANS } from '../shared/auth/principal.ts';
import { gsiKeys, GSI_NAMES, STREAM_VIEW, TABLE_KEYS, TTL_ATTRIBUTE } from '../shared/db/table-definition.ts';
import { dlqName, MESSAGE_RETENTION_SECONDS, OUTBOX_PUBLISHER, QUEUES, RULES, SCHEDULES, type QueueName } from '../shared/events/topology.ts';
import { ServiceFunction } from './service-function.ts';

export interface SupportDeskStackProps extends StackProps {
  /** SES identity (domain or address) response emails are sent from. */
  emailFrom?: string;
  /** Enrichment provider settings (decisions §11); none by default. */
  enrichment?: { provider: 'none' | 'http'; url?: string; apiKey?: string };
  /**
   * Seconds API Gateway caches an authorizer answer per Authorization header
   * (0..3600, default 0 = off). Above 0, a revoked key, a suspended user or a
   * role change takes up to this long to apply (docs/infrastructure.md).
   */
  authorizerCacheTtlSeconds?: number;
}

/** Acknowledge a cdk-nag AwsSolutions finding on a construct, with the reason it is accepted. */
const nagAck = (scope: IConstruct, rule: string, reason: string) => Validations.of(scope).acknowledge({ id: `AwsSolutions::AwsSolutions-${rule}`, reason });

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
  readonly api: RestApi;
  readonly bus: EventBus;
  readonly usagePlans: Record<string, UsagePlan> = {};

  constructor(scope: Construct, id: string, props: SupportDeskStackProps = {}) {
    super(scope, id, props);

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
    for (const g of GSI_NAMES) {
      const k = gsiKeys(g);
      this.table.addGlobalSecondaryIndex({ indexName: g, partitionKey: { name: k.partitionKey, type: AttributeType.STRING }, sortKey: { name: k.sortKey, type: AttributeType.STRING } });
    }

    const sessionSecret = new Secret(this, 'SessionSecret', {
      description: 'HS256 key for session tokens and cursor signatures',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    nagAck(sessionSecret, 'SMG4', 'Rotating the session key signs every user out and invalidates open cursors; rotation is a deliberate operator action (docs/infrastructure.md), not a schedule.');

    this.bus = new EventBus(this, 'Bus', { eventBusName: `${this.stackName}-events` });

    const fn = (id: string, entry: string, description: string, access: 'read' | 'readWrite', environment: Record<string, string> = {}, timeout?: Duration) =>
      new ServiceFunction(this, id, { entry, description, table: this.table, tableAccess: access, sessionSecret, environment: { EVENT_BUS_NAME: this.bus.eventBusName, ...environment }, timeout }).fn;

    // --- Queues and rules of the pipeline (shared/events/topology.ts).
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
    }
    const queueEnv: Record<string, string> = {};
    for (const q of QUEUES) {
      if (q.urlEnv) queueEnv[q.urlEnv] = queues[q.name].queueUrl;
      if (q.dlqUrlEnv) queueEnv[q.dlqUrlEnv] = dlqs[QUEUES.indexOf(q)].queueUrl;
    }
    /** Environment naming the queues a function sends to (each row's `sendsTo`). */
    const sendEnv = (sendsTo: readonly QueueName[] = []) => Object.fromEntries(sendsTo.map((name) => [QUEUES.find((q) => q.name === name)!.urlEnv!, queues[name].queueUrl]));
    const grantSends = (fnc: IGrantable, sendsTo: readonly QueueName[] = []) => sendsTo.forEach((name) => queues[name].grantSendMessages(fnc));
    for (const r of RULES) {
      new Rule(this, `Rule-${r.name}`, {
        eventBus: this.bus,
        description: r.description,
        eventPattern: { source: [...r.pattern.source], ...(r.pattern['detail-type'] ? { detailType: [...r.pattern['detail-type']] } : {}) },
        targets: [new SqsQueue(queues[r.queue])],
      });
    }

    const consumerEnv: Partial<Record<QueueName, Record<string, string>>> = {
      'webhook-delivery': queueEnv,
      'email-sender': { EMAIL_TRANSPORT: 'ses', EMAIL_FROM: props.emailFrom ?? 'support@example.com' },
      enrichment: {
        ENRICHMENT_PROVIDER: props.enrichment?.provider ?? 'none',
        ...(props.enrichment?.url ? { ENRICHMENT_URL: props.enrichment.url } : {}),
        ...(props.enrichment?.apiKey ? { ENRICHMENT_API_KEY: props.enrichment.apiKey } : {}),
      },
    };
    for (const q of QUEUES) {
      const consumer = fn(`Consumer-${q.name}`, q.consumer, q.description, 'readWrite', { ...sendEnv(q.sendsTo), ...consumerEnv[q.name] }, Duration.seconds(q.functionTimeoutSeconds));
      consumer.addEventSource(new SqsEventSource(queues[q.name], { batchSize: q.batchSize, reportBatchItemFailures: true }));
      grantSends(consumer, q.sendsTo);
      if (q.name === 'webhook-delivery') {
        queues['webhook-delivery'].grant(consumer, 'sqs:ChangeMessageVisibility');
        dlqs[QUEUES.indexOf(q)].grantSendMessages(consumer);
      }
      if (q.name === 'email-sender') {
        const identity = (props.emailFrom ?? 'support@example.com').split('@').pop()!;
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
        retryAttempts: 10000,
        reportBatchItemFailures: true,
        onFailure: new SqsDlq(publisherDlq),
        filters: [FilterCriteria.filter({ eventName: FilterRule.isEqual('INSERT'), dynamodb: { NewImage: { type: { S: FilterRule.isEqual('outbox') } } } })],
      }),
    );
    this.bus.grantPutEventsTo(publisher);
    const sweeper = fn('OutboxSweeper', OUTBOX_PUBLISHER.sweeper, 'Republishes outbox items the stream did not', 'readWrite', { OUTBOX_SWEEP_AGE_SECONDS: String(OUTBOX_PUBLISHER.sweepAgeSeconds) }, Duration.seconds(60));
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
        stageName: 'live',
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

    const cacheTtl = Math.max(0, Math.min(3600, Math.floor(props.authorizerCacheTtlSeconds ?? 0)));
    const authorizerFn = fn('AuthorizerFunction', AUTHORIZER.entry, 'REQUEST authorizer: API key or session token -> principal', 'read', { ANONYMOUS_USAGE_KEY: this.anonymousKeyValue(), AUTHORIZER_CACHE_TTL_SECONDS: String(cacheTtl) });
    const authorizer = new RequestAuthorizer(this, 'Authorizer', {
      handler: authorizerFn,
      identitySources: [IdentitySource.header('Authorization')],
      // Default no caching: a suspended user or a revoked key is refused on the very next request. Opt-in trades that delay for a round trip.
      resultsCacheTtl: Duration.seconds(cacheTtl),
    });
    // Without caching no identity source is required; dropping it makes API Gateway call the authorizer even when the
    // header is missing, so the 401 comes from our function in the envelope of the path's interface.
    if (cacheTtl === 0) (authorizer.node.defaultChild as CfnAuthorizer).addPropertyDeletionOverride('IdentitySource');
    nagAck(this.api, 'COG4', 'Callers authenticate with our own API keys and session tokens through the REQUEST authorizer (decisions §1), not Cognito user pools.');
    nagAck(this.api, 'APIG2', 'Every request is validated in the function by the zod contract, answering 400/422 in the interface\'s own envelope; API Gateway models would duplicate it with a different error shape.');
    nagAck(this.api, 'APIG3', 'WAF web ACLs are attached by the platform team per environment (shared ACL in front of all APIs); usage plans and the per-account limit throttle here.');
    Validations.of(this.api).acknowledge({
      id: 'AwsSolutions::AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
      reason: 'The account-level role API Gateway needs to write execution logs; AWS-maintained and limited to CloudWatch Logs.',
    });

    for (const group of API_GROUPS) {
      const handler = fn(`Group-${group.name}`, group.entry, `Endpoint group ${group.name}`, 'readWrite', sendEnv(group.sendsTo));
      grantSends(handler, group.sendsTo);
      const integration = new LambdaIntegration(handler);
      for (const route of group.routes) {
        this.api.root.resourceForPath(route.path).addMethod(route.method, integration, { authorizer, authorizationType: AuthorizationType.CUSTOM, apiKeyRequired: true, operationName: route.operationId });
      }
    }

    // Unknown paths under each interface answer a JSON 404 in that interface's envelope.
    const notFound = new LambdaIntegration(fn('NotFound', NOT_FOUND.entry, 'JSON 404 for unknown routes', 'read'));
    for (const prefix of [...API_PREFIXES, '/helpdesk/api/v1']) {
      const catchAll = this.api.root.resourceForPath(prefix).addResource('{proxy+}').addMethod('ANY', notFound, { authorizationType: AuthorizationType.NONE, apiKeyRequired: false });
      nagAck(catchAll, 'APIG4', 'Catch-all for unknown paths: it only ever answers a 404 and reads nothing.');
    }
    const json = { 'application/json': '{"error":{"code":"resource_not_found","message":"No such route"}}' };
    this.api.addGatewayResponse('MissingToken', { type: ResponseType.MISSING_AUTHENTICATION_TOKEN, statusCode: '404', templates: json });
    this.api.addGatewayResponse('Throttled', { type: ResponseType.THROTTLED, statusCode: '429', templates: { 'application/json': '{"error":{"code":"rate_limit_exceeded","message":"Too many requests"}}' } });
    this.api.addGatewayResponse('Default4xx', { type: ResponseType.DEFAULT_4XX, templates: { 'application/json': '{"error":{"code":"bad_request","message":$context.error.messageString}}' } });
    // With the cache on, the authorizer fails (nothing cached) when the store is throttled: answer that as a retryable 503.
    this.api.addGatewayResponse('AuthorizerUnavailable', {
      type: ResponseType.AUTHORIZER_FAILURE,
      statusCode: '503',
      responseHeaders: { 'Retry-After': "'1'" },
      templates: { 'application/json': '{"success":false,"error":{"code":"SERVICE_UNAVAILABLE","message":"The service is temporarily overloaded; retry shortly"}}' },
    });
    this.api.addGatewayResponse('Default5xx', { type: ResponseType.DEFAULT_5XX, templates: { 'application/json': '{"error":{"code":"internal_error","message":"Internal error"}}' } });

    // --- Usage plans per tier (the outer guard; the exact per-minute count is the service's own, decisions §4).
    for (const plan of PLANS) {
      this.usagePlans[plan] = this.api.addUsagePlan(`Plan-${plan}`, {
        name: `support-desk-${plan}`,
        description: `${plan} accounts: ${PLAN_LIMITS[plan]} requests per minute`,
        throttle: tierThrottle(PLAN_LIMITS[plan]),
        apiStages: [{ api: this.api, stage: this.api.deploymentStage }],
      });
    }
    const anonymous = this.api.addUsagePlan('Plan-anonymous', {
      name: 'support-desk-anonymous',
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
      metric: new Metric({ namespace: 'SupportDesk', metricName: 'OutboxOldestPendingAgeSeconds', statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 300,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    new Alarm(this, 'PublisherIteratorAge', {
      alarmDescription: 'The outbox publisher is more than a minute behind the table stream',
      metric: publisher.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: 60_000,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });

    // --- What the platform team and the admin CLI need.
    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SessionSecretArn', { value: sessionSecret.secretArn });
    new CfnOutput(this, 'EventBusName', { value: this.bus.eventBusName });
    for (const [plan, p] of Object.entries(this.usagePlans)) new CfnOutput(this, `UsagePlan-${plan}`, { value: p.usagePlanId });
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
