import { type CfnElement, Duration, Stack } from 'aws-cdk-lib';
import type { IEventBus } from 'aws-cdk-lib/aws-events';
import type { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { type ISecret, Secret } from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import type { StageConfig } from './config.ts';
import type { Data } from './data.ts';
import { bundles } from './imports.ts';
import { nagAck, nagReference } from './nag.ts';
import { ServiceFunction } from './service-function.ts';
import { checkFunctionSettings } from './settings.ts';
import { OBJECT_STORE_MODULE, type Uploads } from './uploads.ts';

/** Enrichment (decisions §11): functions whose bundles include it are told the provider and may read its key. */
const ENRICHMENT_MODULE = 'shared/organizations/enrichment.ts';
/** The rate limiter; functions whose bundles include it get the counters table and UpdateItem on it. */
const RATE_LIMITER_MODULE = 'shared/ratelimit/limiter.ts';
/** Audits (decisions §15); functions whose bundles write them are told the stage's retention. */
const AUDIT_MODULE = 'shared/audits/repository.ts';
/** The email channel's addresses (decisions §17); functions whose bundles include it are told the stage's inbound domain. */
const INBOUND_ADDRESS_MODULE = 'shared/email/addresses.ts';

/** One function of the stack. */
export interface FunctionOptions {
  /** Construct id, and the function's name in its alarms and in settings errors. */
  id: string;
  /** Entry file, relative to the project root. */
  entry: string;
  description: string;
  /** What the code may do with the table, when its bundle touches it at all; `readUpdate`: read, and UpdateItem (it can neither create, replace nor delete an item). */
  tableAccess: 'read' | 'readUpdate' | 'readWrite';
  /** Variables of its own, besides those that follow from its bundle. */
  environment?: Record<string, string>;
  /** Default: ServiceFunction's, below API Gateway's integration timeout. */
  timeoutSeconds?: number;
  reservedConcurrency?: number;
  /** Where the function is built: the stack itself (default), or a nested stack of its part (the email channel's). */
  scope?: Construct;
}

export interface StackFunction {
  name: string;
  entry: string;
  fn: NodejsFunction;
}

/**
 * The function factory of the stack, and the list of what it made (for the
 * alarms, the dashboard, the authorizer-cache flush and the settings check).
 * What a function is told and granted beyond its options follows from what
 * its bundle imports (infra/imports.ts): the table (none / read / read-write
 * as asked), the session secret, the enrichment provider, the bucket, the
 * audit retention, the counters. So each function holds exactly the grants
 * its code can use, and a new import cannot silently lack one.
 */
export class Functions {
  readonly all: StackFunction[] = [];
  private readonly enrichmentSecret?: ISecret;
  private readonly enrichmentEnv: Record<string, string>;

  constructor(
    private readonly scope: Stack,
    private readonly props: { config: StageConfig; data: Data; bus: IEventBus; uploads: Uploads },
  ) {
    const { enrichment } = props.config;
    // The provider's key stays in Secrets Manager; functions read it through the extension, like the session secret.
    this.enrichmentSecret = enrichment.provider === 'http' ? Secret.fromSecretNameV2(scope, 'EnrichmentApiKey', enrichment.apiKeySecretName) : undefined;
    this.enrichmentEnv =
      enrichment.provider === 'http' ? { ENRICHMENT_PROVIDER: 'http', ENRICHMENT_URL: enrichment.url, ENRICHMENT_API_KEY_SECRET_ID: enrichment.apiKeySecretName } : { ENRICHMENT_PROVIDER: 'none' };
  }

  /** A function of the stack, in the stack's scope, with what its bundle needs. */
  add(options: FunctionOptions): NodejsFunction {
    const { id, entry, description, tableAccess, environment = {}, timeoutSeconds, reservedConcurrency, scope = this.scope } = options;
    const { config, data, bus, uploads } = this.props;
    const enriches = bundles(entry, ENRICHMENT_MODULE);
    const table = bundles(entry, 'shared/db/client.ts') ? tableAccess : 'none';
    const fn = new ServiceFunction(scope, id, {
      entry,
      description,
      table: data.table,
      tableAccess: table === 'readUpdate' ? 'read' : table,
      sessionSecret: bundles(entry, 'shared/auth/secret.ts') ? data.sessionSecret : undefined,
      secrets: enriches && this.enrichmentSecret ? [this.enrichmentSecret] : [],
      environment: {
        EVENT_BUS_NAME: bus.eventBusName,
        STACK_NAME: this.scope.stackName,
        ...(enriches ? this.enrichmentEnv : {}),
        ...(bundles(entry, OBJECT_STORE_MODULE) ? uploads.environment : {}),
        ...(bundles(entry, INBOUND_ADDRESS_MODULE) ? { INBOUND_DOMAIN: config.inboundDomain } : {}),
        ...environment,
      },
      timeout: timeoutSeconds === undefined ? undefined : Duration.seconds(timeoutSeconds),
      memorySize: config.functionMemoryMb,
      logRetention: config.logRetentionDays as RetentionDays,
      reservedConcurrency,
    }).fn;
    if (table === 'readUpdate') data.table.grant(fn, 'dynamodb:UpdateItem');
    // ServiceFunction acknowledges the table's index grant as its own stack names the table; a nested stack names it by a parameter.
    if (table !== 'none' && Stack.of(fn) !== this.scope && fn.role) {
      nagAck(
        fn.role,
        `IAM5[Resource::<${nagReference(fn, data.table.node.defaultChild as CfnElement, 'Arn')}>/index/*]`,
        "Queries use the table's own GSIs; the grant covers exactly this table's indexes.",
      );
    }
    uploads.grantTo(fn, entry);
    // decisions §15: audits expire after the stage's retention, however they are written.
    if (bundles(entry, AUDIT_MODULE)) fn.addEnvironment('AUDIT_RETENTION_DAYS', String(config.auditRetentionDays));
    if (bundles(entry, RATE_LIMITER_MODULE)) {
      fn.addEnvironment('RATE_LIMIT_TABLE_NAME', data.counters.tableName);
      data.counters.grant(fn, 'dynamodb:UpdateItem');
    }
    this.all.push({ name: id, entry, fn });
    return fn;
  }

  /**
   * Every function carries the settings that the modules of its bundle declare (infra/settings.ts): one missing
   * fails the synth here, naming the function and the variable, instead of the function's cold start. Run last,
   * when every variable is set.
   */
  checkSettings(): void {
    for (const { name, entry, fn } of this.all) {
      const environment = Stack.of(fn).resolve((fn.node.defaultChild as CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined;
      checkFunctionSettings(name, entry, environment?.variables ?? {}, this.scope.region);
    }
  }
}
