import { AssetHashType, type CfnElement, type CfnResource, DockerImage, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { bundleFunction, PROJECT_ROOT } from './bundling.ts';

/** Template metadata key of a function's entry file (relative to the project root). */
export const ENTRY_METADATA = 'SupportDesk::Entry';

/** The repository root: function entries in the route table and topology are relative to it. */
export { PROJECT_ROOT };

/**
 * A function's code asset: the project root bundled by `bundleFunction`
 * (the Docker image is never used: esbuild is a dependency and always runs
 * here), hashed by its output as NodejsFunction's assets are.
 */
export function functionCode(entry: string): Code {
  return Code.fromAsset(PROJECT_ROOT, {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      image: DockerImage.fromRegistry('dummy'),
      // Part of the asset's cache key (CDK keys staged assets by these options as JSON, where tryBundle does not
      // show): without it every function of one synth would get the first one's bundle.
      environment: { SUPPORT_DESK_ENTRY: entry },
      local: {
        tryBundle(outputDir) {
          bundleFunction(entry, outputDir);
          return true;
        },
      },
    },
  });
}

export interface ServiceFunctionProps {
  /** Entry file relative to the project root. */
  entry: string;
  description: string;
  table: ITable;
  /** What the code may do with the table; `none` for functions that never touch it. */
  tableAccess: 'none' | 'read' | 'readWrite';
  /** Given only to functions whose code reads it (session tokens, signed cursors). */
  sessionSecret?: ISecret;
  /** Other secrets the code reads through the extension (e.g. the enrichment provider's key). */
  secrets?: ISecret[];
  environment?: Record<string, string>;
  timeout?: Duration;
  memorySize?: number;
  logRetention: RetentionDays;
  reservedConcurrency?: number;
}

/**
 * "A function of this service": Node 24 on arm64, ESM bundle with small source
 * maps (no embedded sources), X-Ray tracing, its own log group and a role that
 * may write only to it, the table and session secret only when its code uses
 * them, and the Parameters and Secrets extension so the secret is read without
 * an SDK client in the bundle.
 */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention, removalPolicy: RemovalPolicy.DESTROY });
    // Our own role instead of AWSLambdaBasicExecutionRole, which may write to any log group of the account.
    const role = new Role(this, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: `${props.description} (its own log group only)` });
    role.addToPolicy(new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn, `${logGroup.logGroupArn}:log-stream:*`] }));
    this.fn = new NodejsFunction(this, 'Fn', {
      // Bundled by infra/bundling.ts (esbuild with code splitting), not by NodejsFunction's one-file bundling.
      code: functionCode(props.entry),
      handler: 'index.handler',
      description: props.description,
      role,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      // Below API Gateway's 29 s integration timeout, so a struggling request ends in our 503 (shared/http/middleware.ts deadline), not a 504.
      timeout: props.timeout ?? Duration.seconds(25),
      reservedConcurrentExecutions: props.reservedConcurrency,
      tracing: Tracing.ACTIVE,
      logGroup,
      ...(props.sessionSecret || props.secrets?.length ? { paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103) } : {}),
      environment: {
        ...(props.tableAccess !== 'none' ? { TABLE_NAME: props.table.tableName } : {}),
        ...(props.sessionSecret ? { SESSION_SECRET_ARN: props.sessionSecret.secretArn } : {}),
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
    });
    // The entry rides along in the template, so the local stack can bundle and run each function of the
    // synthesized template (local/lambda/) without a second list of functions kept by hand.
    (this.fn.node.defaultChild as CfnResource).addMetadata(ENTRY_METADATA, props.entry);
    if (props.tableAccess === 'read') props.table.grantReadData(this.fn);
    if (props.tableAccess === 'readWrite') props.table.grantReadWriteData(this.fn);
    props.sessionSecret?.grantRead(this.fn);
    for (const secret of props.secrets ?? []) secret.grantRead(this.fn);

    const ack = (rule: string, reason: string) => Validations.of(role).acknowledge({ id: `AwsSolutions::${rule}`, reason });
    ack('AwsSolutions-IAM5[Resource::*]', 'X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions.');
    ack(
      `AwsSolutions-IAM5[Resource::<${Stack.of(this).getLogicalId(logGroup.node.defaultChild as CfnElement)}.Arn>:log-stream:*]`,
      "Log streams are created per container at run time; the grant is limited to the function's own log group.",
    );
    if (props.tableAccess !== 'none') {
      const tableId = Stack.of(this).getLogicalId(props.table.node.defaultChild as CfnElement);
      ack(`AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`, "Queries use the table's own GSIs (gsi1..gsi4); the grant covers exactly this table's indexes.");
    }
  }
}
