import { CfnElement, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { Architecture, ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { join } from 'node:path';

/** The repository root: function entries in the route table and topology are relative to it. */
export const PROJECT_ROOT = join(import.meta.dirname, '..');

export interface ServiceFunctionProps {
  /** Entry file relative to the project root. */
  entry: string;
  description: string;
  table: ITable;
  tableAccess: 'read' | 'readWrite';
  sessionSecret: ISecret;
  environment?: Record<string, string>;
  timeout?: Duration;
  memorySize?: number;
}

/**
 * "A function of this service": Node 24 on arm64, ESM bundle with source maps,
 * X-Ray tracing, its own log group, the table and session secret it needs
 * (read or read-write, nothing more), and the Parameters and Secrets extension
 * so the secret is read without an SDK client in the bundle.
 */
export class ServiceFunction extends Construct {
  readonly fn: NodejsFunction;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    const logGroup = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.fn = new NodejsFunction(this, 'Fn', {
      entry: join(PROJECT_ROOT, props.entry),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_24_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? 1024,
      // Below API Gateway's 29 s integration timeout, so a struggling request ends in our 503 (shared/http/middleware.ts deadline), not a 504.
      timeout: props.timeout ?? Duration.seconds(25),
      tracing: Tracing.ACTIVE,
      logGroup,
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: join(PROJECT_ROOT, 'package-lock.json'),
      paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103),
      environment: {
        TABLE_NAME: props.table.tableName,
        SESSION_SECRET_ARN: props.sessionSecret.secretArn,
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '--enable-source-maps',
        ...props.environment,
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node24',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // Some dependencies still call require(); give the ESM bundle one.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        // Bundle the pinned AWS SDK too, rather than whatever version the runtime ships.
        externalModules: [],
      },
    });
    if (props.tableAccess === 'read') props.table.grantReadData(this.fn);
    else props.table.grantReadWriteData(this.fn);
    props.sessionSecret.grantRead(this.fn);

    const tableId = Stack.of(this).getLogicalId(props.table.node.defaultChild as CfnElement);
    const ack = (id: string, reason: string) => Validations.of(this.fn).acknowledge({ id: `AwsSolutions::${id}`, reason });
    ack('AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]', 'AWS-maintained policy that only allows writing the function\'s own logs.');
    ack('AwsSolutions-IAM5[Resource::*]', 'X-Ray PutTraceSegments/PutTelemetryRecords have no resource-level permissions.');
    ack(`AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`, 'Queries use the table\'s own GSIs (gsi1..gsi4); the grant covers exactly this table\'s indexes.');
  }
}
