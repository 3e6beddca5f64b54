import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalEventBridge } from '../bus.ts';
import { startLocalS3 } from '../s3-front.ts';
import { localCounterTableName } from '#shared/db/table-definition.ts';
import type { Bundles } from './build.ts';
import { functionByEntry, type Deployment, type FunctionDef } from './deployment.ts';
import { LocalFunction } from './runtime.ts';
import { startSecretsExtension, type LocalSecret } from './secrets-extension.ts';
import { LOCAL_STAGE, resolveValue, type LocalValues } from './template.ts';

/** The account of every local resource (fauxqs's too: queue URLs are `<endpoint>/000000000000/<name>`). */
export const LOCAL_ACCOUNT = LOCAL_STAGE.account;

export const localQueueUrl = (sqsEndpoint: string, name: string) => `${sqsEndpoint}/${LOCAL_ACCOUNT}/${name}`;

/** A function's ARN locally (what its Fn::GetAtt Arn resolves to, and the receipt event's functionArn). */
export const localFunctionArn = (region: string, name: string) => `arn:aws:lambda:${region}:${LOCAL_ACCOUNT}:function:${name}`;

/** The REST API's id locally (what its Ref resolves to, and the local gateway's requestContext.apiId). */
export const LOCAL_REST_API_ID = 'local';

/**
 * The control plane of the local API Gateway, as far as the stack uses it:
 * FlushStageAuthorizersCache (`DELETE /restapis/{id}/stages/{stage}/cache/authorizers`),
 * which the functions' SDK reaches through AWS_ENDPOINT_URL_API_GATEWAY. The
 * gateways running in front of these functions subscribe to the flushes.
 */
export interface LocalApiGatewayControl {
  endpoint: string;
  restApiId: string;
  stageName: string;
  /** The template's authorizer cache TTL. */
  authorizerCacheTtlSeconds: number;
  /** Be told of each flush; returns the unsubscribe. */
  onAuthorizerCacheFlush(listener: () => void): () => void;
  /** Flushes served so far (tests count them). */
  readonly flushes: number;
}

/** The settings of shared/auth/authorizer-cache.ts for a process that flushes this control plane's cache. */
export const authorizerCacheEnv = (c: Pick<LocalApiGatewayControl, 'restApiId' | 'stageName' | 'authorizerCacheTtlSeconds'>): Record<string, string> => ({
  AUTHORIZER_CACHE_REST_API_ID: c.restApiId,
  AUTHORIZER_CACHE_STAGE: c.stageName,
  AUTHORIZER_CACHE_TTL_SECONDS: String(c.authorizerCacheTtlSeconds),
});

async function startApiGatewayControl(d: Deployment): Promise<LocalApiGatewayControl & { stop(): Promise<void> }> {
  const listeners = new Set<() => void>();
  let flushes = 0;
  const path = `/restapis/${LOCAL_REST_API_ID}/stages/${encodeURIComponent(d.api.stageName)}/cache/authorizers`;
  const server = createServer((req, res) => {
    req.resume();
    if (req.method === 'DELETE' && new URL(req.url ?? '/', 'http://local').pathname === path) {
      flushes++;
      for (const l of listeners) l();
      res.writeHead(202, { 'Content-Type': 'application/json' });
      return res.end('{}');
    }
    // API Gateway's answer to an unknown API or stage.
    res.writeHead(404, { 'Content-Type': 'application/json', 'x-amzn-ErrorType': 'NotFoundException' });
    res.end(JSON.stringify({ message: 'Invalid API identifier or stage specified' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    restApiId: LOCAL_REST_API_ID,
    stageName: d.api.stageName,
    authorizerCacheTtlSeconds: d.api.authorizerCacheTtlSeconds,
    onAuthorizerCacheFlush(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    get flushes() {
      return flushes;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface LocalLambdaOptions {
  deployment: Deployment;
  bundles: Bundles;
  region: string;
  tableName: string;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** The S3 emulator behind the local S3 endpoint (local/s3-front.ts); default: the SQS emulator, fauxqs, which serves S3 on the same endpoint. */
  s3Endpoint?: string;
  sessionSecret: LocalSecret;
  /**
   * The local stack's documented differences from AWS, added on top of each
   * function's template environment (README, "How the local stack maps to the
   * deployed one"): providers with no local account (email, enrichment),
   * loopback webhook targets, log level, and test knobs.
   */
  overlay?: (fn: FunctionDef, env: Record<string, string>) => Record<string, string>;
  /** Where the bus keeps the template's archive (DATA_DIR/archive); without it the bus archives nothing. */
  archiveDir?: string;
  /**
   * The nice value (0-19) of each function's worker thread (Linux: a thread's own): `npm start` runs every function
   * but those that carry events out at 10 (localPriority, local/stack.ts). Default 0 for all.
   */
  niceOf?: (fn: FunctionDef) => number;
  /**
   * How many invocations of each function run at once, at most (beside its reserved concurrency): `npm start` runs
   * the functions it lowers 4 at a time (localConcurrency, local/stack.ts). Default: no bound.
   */
  concurrencyOf?: (fn: FunctionDef) => number | undefined;
}

export interface LocalLambda {
  deployment: Deployment;
  /** The running function of a template resource. */
  fn(logicalId: string): LocalFunction;
  /** The running function built from an entry file (route table and topology name entries). */
  byEntry(entry: string): LocalFunction;
  /** Every function's environment as given to its runtime (tests compare it with the template). */
  environment(logicalId: string): Record<string, string>;
  queueUrl(logicalId: string): string;
  /** The local bus endpoint (AWS_ENDPOINT_URL_EVENTBRIDGE of every function). */
  eventBridgeEndpoint: string;
  busArn: string;
  /** The bus archive's ARN, when it keeps one (`archiveDir`). */
  archiveArn?: string;
  /** The local API Gateway control plane (AWS_ENDPOINT_URL_API_GATEWAY of every function): authorizer-cache flushes. */
  apiGateway: LocalApiGatewayControl;
  /** The S3 endpoint the functions use (AWS_ENDPOINT_URL_S3): what else writes the buckets (the SMTP server) goes through it too. */
  s3Endpoint: string;
  region: string;
  /** Faults injected so far by every function's SDK clients (FAULTS, decisions §19), by `service:kind`. */
  injectedFaults(): Record<string, number>;
  /**
   * Call `listener` when any function's DynamoDB client has committed a write to the table (until the returned function
   * is called): the pipeline reads the table's stream now instead of at its next idle poll. A read, which writes
   * nothing there, starts no read of the stream.
   */
  afterWrites(listener: () => void): () => void;
  stop(): Promise<void>;
}

/**
 * The deployed functions of the synthesized template, ready to invoke: the
 * local EventBridge endpoint and the secrets extension they reach, and one
 * LocalFunction per function with exactly its template's environment
 * (references resolved to the local resources) plus what Lambda itself sets
 * (region, function name, credentials) and the endpoints of the emulators
 * (AWS_ENDPOINT_URL_*, which the AWS SDK honours), then the overlay.
 */
export async function startLocalLambda(opts: LocalLambdaOptions): Promise<LocalLambda> {
  const d = opts.deployment;
  const secretArn = (logicalId: string) => `arn:aws:secretsmanager:${opts.region}:${LOCAL_ACCOUNT}:secret:${d.stackName}/${d.secrets.get(logicalId)}`;
  const values: LocalValues = {
    region: opts.region,
    account: LOCAL_ACCOUNT,
    ref(id) {
      if (id === d.tableId) return opts.tableName;
      if (id === d.counterTableId) return localCounterTableName(opts.tableName);
      if (id === d.busId) return d.busName;
      if (id === d.api.restApiId) return LOCAL_REST_API_ID;
      const q = d.queues.get(id);
      if (q) return localQueueUrl(opts.sqsEndpoint, q.name);
      if (d.secrets.has(id)) return secretArn(id);
      const bucket = d.buckets.get(id);
      if (bucket) return bucket;
      return d.functions.get(id)?.name;
    },
    getAtt(id, attr) {
      const q = d.queues.get(id);
      if (q && attr === 'Arn') return `arn:aws:sqs:${opts.region}:${LOCAL_ACCOUNT}:${q.name}`;
      if (q && attr === 'QueueName') return q.name;
      if (q && attr === 'QueueUrl') return localQueueUrl(opts.sqsEndpoint, q.name);
      if (id === d.busId && attr === 'Name') return d.busName;
      if (d.buckets.has(id) && attr === 'Arn') return `arn:aws:s3:::${d.buckets.get(id)}`;
      if (id === d.busId && attr === 'Arn') return `arn:aws:events:${opts.region}:${LOCAL_ACCOUNT}:event-bus/${d.busName}`;
      const fnDef = d.functions.get(id);
      if (fnDef && attr === 'Arn') return localFunctionArn(opts.region, fnDef.name);
      return undefined;
    },
  };

  const eventBridge = await startLocalEventBridge({
    busName: d.busName,
    region: opts.region,
    sqsEndpoint: opts.sqsEndpoint,
    rules: d.rules.map((r) => ({ name: r.name, pattern: r.pattern, queueUrls: r.queues.map((q) => values.ref(q)!) })),
    archive: d.archive && opts.archiveDir ? { def: d.archive, root: opts.archiveDir } : undefined,
  });
  // S3 as fauxqs serves it, but taking the single PUTs of up to 25 MiB that S3 takes (presigned URLs point here).
  const s3 = await startLocalS3(opts.s3Endpoint ?? opts.sqsEndpoint);
  const sessionToken = randomBytes(16).toString('hex');
  const secretIds = new Map([...d.secrets.keys()].map((id) => [secretArn(id), id]));
  const extension = await startSecretsExtension((id) => (secretIds.has(id) ? opts.sessionSecret : undefined), sessionToken);
  const apiGateway = await startApiGatewayControl(d);

  const envs = new Map<string, Record<string, string>>();
  const functions = new Map<string, LocalFunction>();
  const writeListeners = new Set<() => void>();
  const wrote = () => writeListeners.forEach((l) => l());
  for (const def of d.functions.values()) {
    const fromTemplate = Object.fromEntries(Object.entries(def.environment).map(([k, v]) => [k, resolveValue(v, values)]));
    const env: Record<string, string> = {
      ...fromTemplate,
      // What the Lambda service sets in every sandbox.
      AWS_REGION: opts.region,
      AWS_DEFAULT_REGION: opts.region,
      AWS_LAMBDA_FUNCTION_NAME: def.name,
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(def.memoryMb),
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_SESSION_TOKEN: sessionToken,
      TZ: 'UTC',
      // The network: AWS's service endpoints are the emulators.
      AWS_ENDPOINT_URL_DYNAMODB: opts.dynamodbEndpoint,
      AWS_ENDPOINT_URL_DYNAMODB_STREAMS: opts.dynamodbEndpoint,
      AWS_ENDPOINT_URL_SQS: opts.sqsEndpoint,
      AWS_ENDPOINT_URL_EVENTBRIDGE: eventBridge.endpoint,
      AWS_ENDPOINT_URL_S3: s3.endpoint,
      AWS_ENDPOINT_URL_API_GATEWAY: apiGateway.endpoint,
      ...(def.secretsExtension ? { PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(extension.port) } : {}),
    };
    Object.assign(env, opts.overlay?.(def, env));
    envs.set(def.logicalId, env);
    functions.set(def.logicalId, new LocalFunction(def, opts.bundles.file(def.entry), env, wrote, opts.niceOf?.(def) ?? 0, opts.concurrencyOf?.(def)));
  }

  const fn = (logicalId: string) => {
    const f = functions.get(logicalId);
    if (!f) throw new Error(`No function ${logicalId} in the template`);
    return f;
  };
  return {
    deployment: d,
    fn,
    byEntry: (entry) => fn(functionByEntry(d, entry).logicalId),
    environment: (logicalId) => ({ ...envs.get(logicalId)! }),
    queueUrl: (logicalId) => values.ref(logicalId)!,
    eventBridgeEndpoint: eventBridge.endpoint,
    busArn: eventBridge.busArn,
    archiveArn: eventBridge.archiveArn,
    apiGateway,
    s3Endpoint: s3.endpoint,
    region: opts.region,
    injectedFaults() {
      const total: Record<string, number> = {};
      for (const f of functions.values()) for (const [key, n] of f.faults) total[key] = (total[key] ?? 0) + n;
      return total;
    },
    afterWrites(listener) {
      writeListeners.add(listener);
      return () => writeListeners.delete(listener);
    },
    async stop() {
      await Promise.all([...functions.values()].map((f) => f.stop()));
      await Promise.all([eventBridge.stop(), extension.stop(), s3.stop(), apiGateway.stop()]);
    },
  };
}
