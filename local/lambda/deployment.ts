import { constructId, resourcesOf, type CfnResource, type Template } from './template.ts';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'head', 'options']);
const ANY_METHOD = 'x-amazon-apigateway-any-method';

/**
 * The parts of the synthesized template the local stack runs, read once:
 * functions, queues, event-source mappings, bus rules, schedules and the API.
 * Everything is keyed by CloudFormation logical id, as the template is.
 */

export interface FunctionDef {
  logicalId: string;
  /** The construct id (`Group-users`, `Consumer-webhook-fanout`, `OutboxPublisher`, ...): what logs and errors name. */
  name: string;
  /** Entry file relative to the project root (template metadata, infra/service-function.ts). */
  entry: string;
  /** Environment.Variables as synthesized (values may be intrinsics). */
  environment: Record<string, unknown>;
  timeoutSeconds: number;
  memoryMb: number;
  reservedConcurrency?: number;
  /** The Parameters and Secrets extension layer is attached: the function reads secrets over localhost. */
  secretsExtension: boolean;
}

export interface QueueResource {
  logicalId: string;
  /** The queue's name locally: its construct id (`webhook-fanout`, `webhook-fanout-dlq`, ...). */
  name: string;
  visibilityTimeoutSeconds?: number;
  retentionSeconds?: number;
  redrive?: { deadLetterQueue: string; maxReceiveCount: number };
}

export interface SqsMapping {
  functionId: string;
  queueId: string;
  batchSize: number;
  maxConcurrency?: number;
  reportBatchItemFailures: boolean;
}

export interface StreamMapping {
  functionId: string;
  batchSize: number;
  parallelizationFactor: number;
  reportBatchItemFailures: boolean;
  /** Lambda event filters (FilterCriteria.Filters[].Pattern, parsed): a record must match one. */
  filters: unknown[];
  maxRecordAgeSeconds?: number;
  retryAttempts?: number;
}

export interface BusRule {
  logicalId: string;
  /** The rule's name locally: its construct id (CloudFormation names it in AWS), as a replay's FilterArns name it. */
  name: string;
  pattern: Record<string, unknown>;
  /** Target queues (logical ids). */
  queues: string[];
}

/** The bus archive (AWS::Events::Archive): what it keeps and for how long. */
export interface BusArchive {
  logicalId: string;
  name: string;
  pattern: Record<string, unknown>;
  /** 0: kept forever, as EventBridge reads it. */
  retentionDays: number;
}

export interface ScheduleRule {
  logicalId: string;
  functionId: string;
  rateSeconds: number;
}

export interface ApiRoute {
  /** An HTTP method, or ANY (`x-amazon-apigateway-any-method`). */
  method: string;
  /** Resource path template, e.g. `/helpdesk/api/v1/tickets/{ticketId}`. */
  path: string;
  /** The function of its aws_proxy integration. */
  functionId: string;
  /** The method is behind the authorizer (its security names it). */
  authorized: boolean;
}

/** One action of an SES receipt rule, in the rule's order (the local SMTP server runs them so). */
export type ReceiptAction = { type: 'S3'; bucketId: string; objectKeyPrefix: string } | { type: 'Lambda'; functionId: string; invocationType: 'Event' | 'RequestResponse' };

/** An SES receipt rule (AWS::SES::ReceiptRule): the mail it takes and what it does with it. */
export interface ReceiptRule {
  logicalId: string;
  name: string;
  /** Addresses or domains it matches (a domain: every address at it). */
  recipients: string[];
  scanEnabled: boolean;
  actions: ReceiptAction[];
}

/** A Lambda function subscribed to an SNS topic of the stack (the SES notifications' topic). */
export interface TopicSubscription {
  topicId: string;
  /** The topic's name (its TopicName, else its construct id). */
  topicName: string;
  functionId: string;
}

export interface Deployment {
  stackName: string;
  tableId: string;
  /** The counters table (no stream; rate-limit windows), if the template has one. */
  counterTableId?: string;
  busId: string;
  busName: string;
  functions: Map<string, FunctionDef>;
  queues: Map<string, QueueResource>;
  sqsMappings: SqsMapping[];
  streamMappings: StreamMapping[];
  rules: BusRule[];
  /** The archive of the bus, if the template has one. */
  archive?: BusArchive;
  schedules: ScheduleRule[];
  /** The REST API, read from the RestApi's Body (its OpenAPI definition, infra/api-definition.ts) and its stage. */
  api: {
    routes: ApiRoute[];
    authorizerFunctionId: string;
    /** The RestApi's logical id (functions that flush the authorizer cache hold its Ref). */
    restApiId: string;
    /** The deployed stage's name. */
    stageName: string;
    /** The authorizer's authorizerResultTtlInSeconds: how long the gateway caches an answer per Authorization header. */
    authorizerCacheTtlSeconds: number;
  };
  /** Secrets of the stack (logical id -> construct id). */
  secrets: Map<string, string>;
  /** S3 buckets of the stack (logical id -> the bucket's local name, from its construct path). */
  buckets: Map<string, string>;
  /** The SES receipt rules (the email channel's, decisions §17): what the local SMTP server does with a mail. */
  receiptRules: ReceiptRule[];
  /** Functions subscribed to the stack's SNS topics. */
  topicSubscriptions: TopicSubscription[];
}

const refId = (v: unknown): string | undefined => (v && typeof v === 'object' && 'Ref' in v ? String((v as { Ref: unknown }).Ref) : undefined);
const getAttId = (v: unknown): string | undefined => {
  if (!v || typeof v !== 'object' || !('Fn::GetAtt' in v)) return undefined;
  const a = (v as { 'Fn::GetAtt': unknown })['Fn::GetAtt'];
  return Array.isArray(a) ? String(a[0]) : String(a).split('.')[0];
};

/** Every logical id referenced anywhere inside a value (Ref and Fn::GetAtt). */
function referencedIds(v: unknown, out: string[] = []): string[] {
  if (Array.isArray(v)) v.forEach((x) => referencedIds(x, out));
  else if (v && typeof v === 'object') {
    const ref = refId(v) ?? getAttId(v);
    if (ref) out.push(ref);
    else Object.values(v).forEach((x) => referencedIds(x, out));
  }
  return out;
}

function rateSeconds(expr: string): number {
  const m = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expr);
  if (!m) throw new Error(`Unsupported schedule expression locally: ${expr}`);
  const unit = m[2].startsWith('minute') ? 60 : m[2].startsWith('hour') ? 3600 : 86400;
  return Number(m[1]) * unit;
}

/** Read the deployment out of a synthesized template. */
export function readDeployment(stackName: string, template: Template): Deployment {
  const single = (type: string) => {
    const found = resourcesOf(template, type);
    if (found.length !== 1) throw new Error(`Expected one ${type} in the template, found ${found.length}`);
    return found[0];
  };
  // The main table carries the stream; the counters table (shared/db/table-definition.ts COUNTER_TABLE) does not.
  const tables = resourcesOf(template, 'AWS::DynamoDB::Table');
  const streamed = tables.filter(([, r]) => r.Properties?.StreamSpecification);
  if (streamed.length !== 1 || tables.length > 2) throw new Error(`Expected one table with a stream and at most one without, found ${tables.length} tables`);
  const [tableId] = streamed[0];
  const counterTableId = tables.find(([id]) => id !== tableId)?.[0];
  const [busId, bus] = single('AWS::Events::EventBus');

  const functions = new Map<string, FunctionDef>();
  for (const [id, r] of resourcesOf(template, 'AWS::Lambda::Function')) {
    const entry = r.Metadata?.['SupportDesk::Entry'];
    if (typeof entry !== 'string') throw new Error(`Function ${id} has no SupportDesk::Entry metadata (infra/service-function.ts)`);
    const path = String(r.Metadata?.['aws:cdk:path'] ?? id).split('/');
    const p = r.Properties ?? {};
    functions.set(id, {
      logicalId: id,
      name: path.length >= 3 ? path[path.length - 3] : id,
      entry,
      environment: (p.Environment?.Variables ?? {}) as Record<string, unknown>,
      timeoutSeconds: Number(p.Timeout ?? 3),
      memoryMb: Number(p.MemorySize ?? 128),
      reservedConcurrency: p.ReservedConcurrentExecutions === undefined ? undefined : Number(p.ReservedConcurrentExecutions),
      secretsExtension: JSON.stringify(p.Layers ?? []).includes('Parameters-and-Secrets'),
    });
  }

  const queues = new Map<string, QueueResource>();
  for (const [id, r] of resourcesOf(template, 'AWS::SQS::Queue')) {
    const p = r.Properties ?? {};
    const name = constructId(r) ?? id;
    queues.set(id, {
      logicalId: id,
      name,
      visibilityTimeoutSeconds: p.VisibilityTimeout === undefined ? undefined : Number(p.VisibilityTimeout),
      retentionSeconds: p.MessageRetentionPeriod === undefined ? undefined : Number(p.MessageRetentionPeriod),
      redrive: p.RedrivePolicy ? { deadLetterQueue: getAttId(p.RedrivePolicy.deadLetterTargetArn)!, maxReceiveCount: Number(p.RedrivePolicy.maxReceiveCount) } : undefined,
    });
  }

  const sqsMappings: SqsMapping[] = [];
  const streamMappings: StreamMapping[] = [];
  for (const [, r] of resourcesOf(template, 'AWS::Lambda::EventSourceMapping')) {
    const p = r.Properties ?? {};
    const functionId = refId(p.FunctionName)!;
    const source = getAttId(p.EventSourceArn)!;
    const reportBatchItemFailures = (p.FunctionResponseTypes ?? []).includes('ReportBatchItemFailures');
    if (queues.has(source)) {
      sqsMappings.push({ functionId, queueId: source, batchSize: Number(p.BatchSize ?? 10), maxConcurrency: p.ScalingConfig?.MaximumConcurrency, reportBatchItemFailures });
    } else if (source === tableId) {
      streamMappings.push({
        functionId,
        batchSize: Number(p.BatchSize ?? 100),
        parallelizationFactor: Number(p.ParallelizationFactor ?? 1),
        reportBatchItemFailures,
        filters: (p.FilterCriteria?.Filters ?? []).map((f: { Pattern: string }) => JSON.parse(f.Pattern)),
        maxRecordAgeSeconds: p.MaximumRecordAgeInSeconds,
        retryAttempts: p.MaximumRetryAttempts,
      });
    } else throw new Error(`Event source ${source} of ${functionId} is neither a queue nor the table`);
  }

  const rules: BusRule[] = [];
  const schedules: ScheduleRule[] = [];
  for (const [id, r] of resourcesOf(template, 'AWS::Events::Rule')) {
    const p = r.Properties ?? {};
    if (p.State && p.State !== 'ENABLED') continue;
    const targets = (p.Targets ?? []).map((t: { Arn: unknown }) => getAttId(t.Arn)).filter(Boolean) as string[];
    if (p.ScheduleExpression) {
      for (const t of targets) if (functions.has(t)) schedules.push({ logicalId: id, functionId: t, rateSeconds: rateSeconds(p.ScheduleExpression) });
    } else if (p.EventPattern && refId(p.EventBusName) === busId) {
      rules.push({ logicalId: id, name: constructId(r) ?? id, pattern: p.EventPattern, queues: targets.filter((t) => queues.has(t)) });
    }
  }

  const archives = resourcesOf(template, 'AWS::Events::Archive').filter(([, r]) => getAttId(r.Properties?.SourceArn) === busId);
  if (archives.length > 1) throw new Error(`The local bus keeps one archive; the template has ${archives.length}`);
  const archive: BusArchive | undefined = archives.map(([id, r]) => ({
    logicalId: id,
    name: String(r.Properties?.ArchiveName ?? id),
    pattern: (r.Properties?.EventPattern ?? {}) as Record<string, unknown>,
    retentionDays: Number(r.Properties?.RetentionDays ?? 0),
  }))[0];

  const api = readApi(template, functions);
  const secrets = new Map(resourcesOf(template, 'AWS::SecretsManager::Secret').map(([id, r]) => [id, constructId(r) ?? id]));
  const buckets = new Map(resourcesOf(template, 'AWS::S3::Bucket').map(([id, r]) => [id, localBucketName(stackName, r, id)]));

  const receiptRules: ReceiptRule[] = resourcesOf(template, 'AWS::SES::ReceiptRule')
    .map(([id, r]) => {
      const rule = (r.Properties?.Rule ?? {}) as Record<string, any>;
      if (rule.Enabled === false) return undefined;
      const actions = ((rule.Actions ?? []) as Record<string, any>[]).map((a): ReceiptAction => {
        if (a.S3Action) return { type: 'S3', bucketId: refId(a.S3Action.BucketName)!, objectKeyPrefix: String(a.S3Action.ObjectKeyPrefix ?? '') };
        if (a.LambdaAction) return { type: 'Lambda', functionId: getAttId(a.LambdaAction.FunctionArn)!, invocationType: a.LambdaAction.InvocationType ?? 'Event' };
        throw new Error(`Receipt rule ${id}: only S3 and Lambda actions run locally, found ${Object.keys(a).join(', ')}`);
      });
      for (const a of actions) {
        if (a.type === 'S3' && !buckets.has(a.bucketId)) throw new Error(`Receipt rule ${id} stores mail in ${a.bucketId}, not a bucket of the stack`);
        if (a.type === 'Lambda' && !functions.has(a.functionId)) throw new Error(`Receipt rule ${id} invokes ${a.functionId}, not a function of the stack`);
      }
      return { logicalId: id, name: String(rule.Name ?? id), recipients: (rule.Recipients ?? []).map(String), scanEnabled: rule.ScanEnabled === true, actions };
    })
    .filter((r): r is ReceiptRule => r !== undefined);

  const topics = new Map(resourcesOf(template, 'AWS::SNS::Topic').map(([id, r]) => [id, String(r.Properties?.TopicName ?? constructId(r) ?? id)]));
  const topicSubscriptions: TopicSubscription[] = resourcesOf(template, 'AWS::SNS::Subscription').flatMap(([, r]) => {
    const p = r.Properties ?? {};
    const topicId = refId(p.TopicArn);
    const functionId = getAttId(p.Endpoint);
    if (p.Protocol !== 'lambda' || !topicId || !topics.has(topicId) || !functionId || !functions.has(functionId)) return [];
    return [{ topicId, topicName: topics.get(topicId)!, functionId }];
  });

  return {
    stackName,
    tableId,
    counterTableId,
    busId,
    busName: String(bus.Properties?.Name),
    functions,
    queues,
    sqsMappings,
    streamMappings,
    rules,
    archive,
    schedules,
    api,
    secrets,
    buckets,
    receiptRules,
    topicSubscriptions,
  };
}

/** A bucket's name locally (CloudFormation generates it in AWS): the stack and the construct path, as S3 allows names (3-63 of a-z0-9.-). */
function localBucketName(stackName: string, r: CfnResource, logicalId: string): string {
  const path = String(r.Metadata?.['aws:cdk:path'] ?? logicalId)
    .split('/')
    .slice(1)
    .filter((p) => p !== 'Resource');
  const name = [stackName, ...path]
    .join('-')
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-');
  return name.slice(0, 63).replace(/-+$/, '');
}

/** A function by its entry file (the route table and topology name entries). */
export function functionByEntry(d: Deployment, entry: string): FunctionDef {
  for (const f of d.functions.values()) if (f.entry === entry) return f;
  throw new Error(`No function with entry ${entry} in the template`);
}

/**
 * The REST API as API Gateway imports it: the RestApi's Body (OpenAPI with API Gateway's extensions). Each operation
 * with an aws_proxy integration is a route to the function its URI names (by a stage variable the stage sets to the
 * function's name, or by the function's ARN); it is authorized when its security names the REQUEST authorizer.
 * Operations with another integration (the MOCK of /health) are the local gateway's own pages.
 */
function readApi(template: Template, functions: ReadonlyMap<string, FunctionDef>): Deployment['api'] {
  const apis = resourcesOf(template, 'AWS::ApiGateway::RestApi');
  const stages = resourcesOf(template, 'AWS::ApiGateway::Stage');
  if (apis.length !== 1 || stages.length !== 1) throw new Error(`Expected one RestApi and one Stage in the template, found ${apis.length} and ${stages.length}`);
  const [[restApiId, restApi]] = apis;
  const [[, stage]] = stages;
  const body = restApi.Properties?.Body as Record<string, any> | undefined;
  if (!body?.paths) throw new Error('The RestApi has no Body: the local gateway routes by its OpenAPI definition (infra/api-definition.ts)');
  const variables = (stage.Properties?.Variables ?? {}) as Record<string, unknown>;
  /** The function an integration or authorizer URI invokes. */
  const functionOf = (uri: unknown, what: string): string => {
    const text = JSON.stringify(uri);
    const variable = /\$\{stageVariables\.(\w+)\}/.exec(text)?.[1];
    const ids = variable ? referencedIds(variables[variable]) : referencedIds(uri);
    const id = ids.find((i) => functions.has(i));
    if (!id) throw new Error(`${what}: its URI names no function of the stack${variable ? ` (stage variable ${variable})` : ''}`);
    return id;
  };
  const schemes = (body.components?.securitySchemes ?? {}) as Record<string, Record<string, any>>;
  const authorizers = Object.entries(schemes).filter(([, s]) => s['x-amazon-apigateway-authorizer']);
  if (authorizers.length !== 1) throw new Error(`Expected one x-amazon-apigateway-authorizer in the definition, found ${authorizers.length}`);
  const [[authorizerName, { 'x-amazon-apigateway-authorizer': authorizer }]] = authorizers;
  const routes: ApiRoute[] = [];
  for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
    for (const [key, op] of Object.entries(item)) {
      if (!HTTP_METHODS.has(key) && key !== ANY_METHOD) continue;
      const method = key === ANY_METHOD ? 'ANY' : key.toUpperCase();
      const integration = op['x-amazon-apigateway-integration'];
      if (!integration) throw new Error(`${method} ${path} has no x-amazon-apigateway-integration`);
      if (integration.type !== 'aws_proxy') continue;
      const security = (op.security ?? body.security ?? []) as Record<string, unknown>[];
      routes.push({ method, path, functionId: functionOf(integration.uri, `${method} ${path}`), authorized: security.some((s) => authorizerName in s) });
    }
  }
  return {
    routes,
    authorizerFunctionId: functionOf(authorizer.authorizerUri, 'The authorizer'),
    restApiId,
    stageName: String(stage.Properties?.StageName),
    // API Gateway's default for an authorizer without the property is 300 s; the app always sets it.
    authorizerCacheTtlSeconds: Number(authorizer.authorizerResultTtlInSeconds ?? 300),
  };
}
