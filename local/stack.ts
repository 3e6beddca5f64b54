import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { localCounterTableName } from '#shared/db/table-definition.ts';
import { parseFaults } from '#shared/faults/settings.ts';
import { ensureTable, startDynamoDbLocal } from './dynamodb-local.ts';
import { slowFauxqsPollTimers } from './fauxqs-timers.ts';
import type { GatewayExtras } from './gateway.ts';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildBundles, type Bundles } from './lambda/build.ts';
import { readDeployment, type Deployment, type FunctionDef } from './lambda/deployment.ts';
import { authorizerCacheEnv, LOCAL_ACCOUNT, startLocalLambda } from './lambda/index.ts';
import { createLocalBuckets } from './lambda/buckets.ts';
import { createLocalQueues } from './lambda/queues.ts';
import { LOCAL_STAGE, synthesizeLocalStack, type Template } from './lambda/template.ts';
import { pipelineEnvVars, startLocalSqs } from './sqs-emulator.ts';
import { withoutSdkLogger } from '#shared/sdk-client.ts';

/** An SQS client of this process on the emulator (queue setup). */
export const sqsClient = (endpoint: string) => withoutSdkLogger(new SQSClient({ region: LOCAL_REGION, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));

export const LOCAL_TABLE = 'support-desk';
export const LOCAL_REGION = 'us-east-1';

/** The local stack's settings, from the same environment variables `npm start` documents. */
export function localSettings(envVars: NodeJS.ProcessEnv = process.env) {
  const int = (v: string | undefined, d: number) => {
    const n = Number(v ?? d);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`Invalid port: ${v}`);
    return n;
  };
  // SQS (fauxqs) defaults to a free port: nothing outside the stack needs to find it, and it is printed at start.
  // DATA_DIR is made absolute here: DynamoDB Local runs with its own folder as working directory, so a relative
  // path (the default `.data`) would be looked for inside node_modules.
  return {
    port: int(envVars.PORT, 3000),
    dynamodbPort: int(envVars.DYNAMODB_PORT, 8000),
    sqsPort: int(envVars.SQS_PORT, 0),
    // Mail to the inbound domain (decisions §17); 0: a free port (tests), printed at start.
    smtpPort: int(envVars.SMTP_PORT, 2525),
    dataDir: resolve(envVars.DATA_DIR || '.data'),
    // Checked here so that a typo stops `npm start` with the entry named (InvalidFaultsError), before anything starts.
    faults: parseFaults(envVars.FAULTS),
  };
}

/**
 * Point this process's own tools at the local emulators (the demo-account
 * setup of `npm start`, the admin CLI, the tests' fixtures): they use the
 * same services from the sources. The deployed functions never see this
 * process's environment; each gets its template's (local/lambda/).
 */
export function configureLocalEnv(opts: { dynamodbEndpoint: string; sessionSecret: string; tableName?: string; sqsEndpoint?: string }) {
  process.env.TABLE_NAME = opts.tableName ?? LOCAL_TABLE;
  process.env.RATE_LIMIT_TABLE_NAME = localCounterTableName(opts.tableName ?? LOCAL_TABLE);
  process.env.AWS_REGION = LOCAL_REGION;
  process.env.DYNAMODB_ENDPOINT = opts.dynamodbEndpoint;
  process.env.SESSION_SECRET = opts.sessionSecret;
  // The local stage's inbound mail domain: this process's tools build and read inbound addresses as the functions do.
  process.env.INBOUND_DOMAIN = LOCAL_STAGE.inboundDomain;
  // The SDK must never reach for real credentials locally.
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  if (opts.sqsEndpoint) Object.assign(process.env, pipelineEnvVars(opts.sqsEndpoint));
}

/**
 * Settings of this process that the local stack hands to every function on
 * top of its template's: test knobs, and FAULTS (decisions §19), which only
 * the functions act on (shared/faults/inject.ts) and no deployed template carries.
 */
const FORWARDED = ['LOG_LEVEL', 'WEBHOOK_RETRY_SCALE', 'CONSUMER_RETRY_BASE_SECONDS', 'WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_ALLOW_INSECURE_TLS', 'FAULTS', 'DYNAMODB_REQUEST_TIMEOUT_MS'] as const;

/**
 * What the local stack changes in a function's environment, and nothing
 * else (README, "How the local stack maps to the deployed one"):
 * - webhook targets may be loopback addresses with self-signed certificates;
 * - email goes to `.eml` files under DATA_DIR/emails instead of SES, and
 *   enrichment reads data/companies.json instead of a provider's API;
 * - no CloudWatch: EMF metrics are off;
 * - the knobs in FORWARDED, when this process sets them (tests speed up retries;
 *   FAULTS injects AWS faults into the functions' SDK calls, and the fault tests
 *   shorten DynamoDB's request timeout, which an injected hang waits out), and
 *   EMAIL_OUTBOX_DIR (a test's own outbox folder).
 */
export function localOverlay(dataDir: string | undefined) {
  const knobs = Object.fromEntries(FORWARDED.flatMap((k) => (process.env[k] !== undefined ? [[k, process.env[k]!]] : [])));
  return (_fn: FunctionDef, env: Record<string, string>): Record<string, string> => ({
    POWERTOOLS_METRICS_DISABLED: 'true',
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    WEBHOOK_ALLOW_INSECURE_TLS: '1',
    ...(env.EMAIL_TRANSPORT ? { EMAIL_TRANSPORT: 'file', EMAIL_OUTBOX_DIR: process.env.EMAIL_OUTBOX_DIR ?? join(dataDir ?? tmpdir(), 'emails') } : {}),
    // Survey links point at the local gateway (decisions §24).
    ...(env.PUBLIC_BASE_URL ? { PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? `http://localhost:${process.env.PORT ?? 3000}` } : {}),
    ...(env.ENRICHMENT_PROVIDER ? { ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: join(import.meta.dirname, '..', 'data', 'companies.json') } : {}),
    ...knobs,
  });
}

/**
 * The deployment the local stack runs: the template of the `local` stage,
 * synthesized by the CDK app, and its functions bundled with the options
 * `cdk synth` uses (cached while no source changes).
 */
export async function prepareDeployment(): Promise<{ deployment: Deployment; bundles: Bundles; template: Template }> {
  const { stackName, template } = await synthesizeLocalStack();
  const deployment = readDeployment(stackName, template);
  const bundles = await buildBundles([...deployment.functions.values()].map((f) => f.entry));
  return { deployment, bundles, template };
}

/** The pages the local gateway serves without auth: health, the OpenAPI document, and the API reference with its assets. */
export async function localPages(): Promise<NonNullable<GatewayExtras['pages']>> {
  const { openApiDocument } = await import('#app/openapi/document.ts');
  const { DOCS_ASSETS, DOCS_PAGE } = await import('#app/openapi/docs-page.ts');
  const doc = JSON.stringify(openApiDocument());
  const swaggerDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const assets = Object.fromEntries(
    Object.entries(DOCS_ASSETS).map(([path, contentType]) => {
      const body = readFileSync(join(swaggerDir, basename(path)), 'utf8');
      return [path, () => ({ status: 200, contentType, body })];
    }),
  );
  return {
    '/health': () => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ status: 'ok' }) }),
    '/openapi.json': () => ({ status: 200, contentType: 'application/json', body: doc }),
    '/docs': () => ({ status: 200, contentType: 'text/html; charset=utf-8', body: DOCS_PAGE }),
    ...assets,
  };
}

/** Where a running local stack's emulators listen, for the admin CLI (written under DATA_DIR at start). */
export interface LocalEndpoints {
  sqsEndpoint: string;
  eventBridgeEndpoint: string;
  busName: string;
  busArn?: string;
  /** The bus archive (the replay command's EventSourceArn). */
  archiveArn?: string;
  /** The API Gateway control plane and the ids revoke-api-key and set-plan flush the authorizer cache of. */
  apiGateway?: { endpoint: string; restApiId: string; stageName: string; authorizerCacheTtlSeconds: number };
}
export const LOCAL_ENDPOINTS_FILE = 'local-endpoints.json';

/** The endpoints of the stack running on this data directory, if one has started there. */
export function localEndpoints(dataDir: string): LocalEndpoints | undefined {
  const file = join(dataDir, LOCAL_ENDPOINTS_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as LocalEndpoints) : undefined;
}

export interface LocalStack {
  baseUrl: string;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  /** The SMTP server playing the SES receipt rule (local/smtp.ts): its port and the inbound domain it takes mail for. */
  smtp: { port: number; domain: string };
  /** Faults the functions injected so far (FAULTS), by `service:kind`. */
  injectedFaults(): Record<string, number>;
  /** Stop / start reading the stream into the bus (the bench times a create's request path alone; the events wait in the outbox). */
  publisher: { stop(): Promise<void>; start(): Promise<void> };
  /** Resolves once every event written so far has been handled by every consumer (the bench's catch-up after a burst). */
  drained(): Promise<void>;
  stop(): Promise<void>;
}

/** The nice value of every function's thread under `npm start` but those that carry events out (localPriority). */
export const BACKGROUND_NICE = 10;
/** The functions that carry events out of the system: the stream's publisher and its sweeper, the webhooks' fan-out and delivery, outbound mail. */
const OUTWARD_ENTRIES = [
  'functions/outbox-publisher/handler.ts',
  'functions/outbox-publisher/sweeper.ts',
  'functions/webhook-fanout/handler.ts',
  'functions/webhook-delivery/handler.ts',
  'functions/email-sender/handler.ts',
];

/**
 * Each function's thread priority under `npm start` and in the bench (docs/decisions.md, "The local stack serves
 * what carries events out first"). In AWS each function has capacity of its own; here all of them, the pollers and
 * the store share the laptop's cores, and a burst of creates at concurrency 8 outran the delivery of its events. So
 * the functions that carry events out run at the usual priority, like this process's main thread (the gateway, the
 * bus, the pollers), and every other one (the API's, the internal consumers', the scheduled jobs') at nice 10: under
 * a burst the deliveries keep pace, and the rest slows down and catches up after it (docs/performance.md, "Stop 54").
 */
export function localPriority(d: Deployment): (fn: FunctionDef) => number {
  const entries = new Set([...d.functions.values()].map((f) => f.entry));
  const missing = OUTWARD_ENTRIES.filter((e) => !entries.has(e));
  if (missing.length) throw new Error(`No function of the template is built from ${missing.join(', ')} (OUTWARD_ENTRIES, local/stack.ts)`);
  return (fn) => (OUTWARD_ENTRIES.includes(fn.entry) ? 0 : BACKGROUND_NICE);
}

/** How many invocations of a lowered function run at once under `npm start` and in the bench (localConcurrency). */
export const BACKGROUND_CONCURRENCY = 4;

/**
 * Each function's bound on invocations at once under `npm start` and in the bench: the functions `localPriority`
 * lowers run 4 at a time, those that carry events out without a bound. A nice value orders the Node side only; the
 * store (DynamoDB Local) serves every request on one thread in the order it comes, so a burst of 16 creates in flight
 * put 16 transactions ahead of each store call of a delivery. Four at a time keep the store's queue short, and the
 * rest of a burst waits in the gateway, before its answer, instead (docs/decisions.md, "The local stack serves what
 * carries events out first"; docs/performance.md, "Stop 55").
 */
export function localConcurrency(d: Deployment): (fn: FunctionDef) => number | undefined {
  const niceOf = localPriority(d);
  return (fn) => (niceOf(fn) === BACKGROUND_NICE ? BACKGROUND_CONCURRENCY : undefined);
}

/**
 * Bring up the whole local stack: DynamoDB Local (persisted under dataDir, or
 * in memory), the table, fauxqs with the topology's queues, the event
 * pipeline (stream -> publisher -> bus -> queues -> consumers), the gateway in
 * front of the same handlers, and the SMTP server in front of the inbound
 * mail function (`smtpPort`, default 0: a free port).
 */
export async function startLocalStack(opts: { port: number; dynamodbPort: number; sqsPort?: number; smtpPort?: number; dataDir?: string; sessionSecret: string }): Promise<LocalStack> {
  // The template and bundles are prepared while DynamoDB Local's JVM starts.
  const prepared = prepareDeployment();
  prepared.catch(() => undefined);
  const dynamo = await startDynamoDbLocal(opts.dynamodbPort, opts.dataDir ? join(opts.dataDir, 'dynamodb') : undefined);
  const stops: Array<() => Promise<void>> = [() => dynamo.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  try {
    // Uploads and attachments are kept under DATA_DIR/s3 (files), like the table under DATA_DIR/dynamodb; queues
    // under DATA_DIR/sqs, so what was queued is still there after a restart, even after a SIGKILL.
    // fauxqs's 20 ms per-queue timer while a receive waits was most of the idle CPU (local/fauxqs-timers.ts).
    await slowFauxqsPollTimers(250);
    const sqs = await startLocalSqs(opts.sqsPort ?? 0, { s3Dir: opts.dataDir ? join(opts.dataDir, 's3') : undefined, dataDir: opts.dataDir ? join(opts.dataDir, 'sqs') : undefined });
    stops.push(() => sqs.stop());
    configureLocalEnv({ dynamodbEndpoint: dynamo.endpoint, sessionSecret: opts.sessionSecret, sqsEndpoint: sqs.endpoint });
    await ensureTable(dynamo.endpoint, LOCAL_TABLE);
    const { deployment, bundles } = await prepared;
    await createLocalQueues(sqsClient(sqs.endpoint), deployment, LOCAL_REGION, LOCAL_ACCOUNT);
    // fauxqs serves S3 on the same endpoint: the template's bucket, for uploads and attachments.
    await createLocalBuckets(sqs.endpoint, deployment, LOCAL_REGION);
    const lambda = await startLocalLambda({
      deployment,
      bundles,
      region: LOCAL_REGION,
      tableName: LOCAL_TABLE,
      dynamodbEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      sessionSecret: { current: opts.sessionSecret },
      overlay: localOverlay(opts.dataDir),
      archiveDir: opts.dataDir ? join(opts.dataDir, 'archive') : undefined,
      niceOf: localPriority(deployment),
      concurrencyOf: localConcurrency(deployment),
    });
    stops.push(() => lambda.stop());
    // This process's own tools reach the same bus; the admin CLI finds it (and the queues) in the data directory.
    const endpoints: LocalEndpoints = {
      sqsEndpoint: sqs.endpoint,
      eventBridgeEndpoint: lambda.eventBridgeEndpoint,
      busName: deployment.busName,
      busArn: lambda.busArn,
      ...(lambda.archiveArn ? { archiveArn: lambda.archiveArn } : {}),
      apiGateway: {
        endpoint: lambda.apiGateway.endpoint,
        restApiId: lambda.apiGateway.restApiId,
        stageName: lambda.apiGateway.stageName,
        authorizerCacheTtlSeconds: lambda.apiGateway.authorizerCacheTtlSeconds,
      },
    };
    Object.assign(process.env, {
      EVENT_BUS_NAME: endpoints.busName,
      AWS_ENDPOINT_URL_EVENTBRIDGE: endpoints.eventBridgeEndpoint,
      AWS_ENDPOINT_URL_API_GATEWAY: lambda.apiGateway.endpoint,
      ...authorizerCacheEnv(lambda.apiGateway),
    });
    if (opts.dataDir) writeFileSync(join(opts.dataDir, LOCAL_ENDPOINTS_FILE), JSON.stringify(endpoints, null, 2));
    const { startPipeline } = await import('./pipeline.ts');
    // Idle CPU (issues 21 and 42): idle queues long-poll 5 s at a time (stopping waits up to that for the pending receives)
    // and an idle stream is read every 5 s; under load both read on at once. A function's write never waits for that
    // poll: each committed write of a function starts a read (local/stream-poller.ts, nudge). Only a write from outside the functions
    // (the admin CLI in its own process) may wait up to 5 s for its event.
    const pipeline = await startPipeline({
      lambda,
      dynamodbEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      tableName: LOCAL_TABLE,
      region: LOCAL_REGION,
      idleWaitSeconds: 5,
      idleStreamMaxMs: 5000,
    });
    stops.push(() => pipeline.stop());
    // Mail in, as SES receiving hands it to the inbound function; its objects go to the template's bucket (DATA_DIR/s3).
    const { startLocalSmtp } = await import('./smtp.ts');
    const smtp = await startLocalSmtp({ port: opts.smtpPort ?? 0, lambda });
    stops.push(() => smtp.stop());
    const { startGateway } = await import('./gateway.ts');
    // The production shape: the template's authorizer cache (LOCAL_STAGE: 300 s), flushed by credential changes.
    const gateway = await startGateway(opts.port, lambda, { pages: await localPages(), authorizerCacheTtlSeconds: deployment.api.authorizerCacheTtlSeconds });
    stops.push(() => drainGateway(gateway));
    return {
      baseUrl: gateway.url,
      dynamodbEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      smtp: { port: smtp.port, domain: smtp.domain },
      injectedFaults: () => lambda.injectedFaults(),
      publisher: { stop: () => pipeline.stopPublisher(), start: () => pipeline.startPublisher() },
      drained: () => pipeline.drained(),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * Stop taking requests and let those in flight finish and answer (at most
 * `graceMs`), closing kept-alive connections as they fall idle; then close
 * whatever is left. A client is not cut off from a write that commits anyway
 * (it would retry and create it twice); the write's events are in the outbox
 * either way, published now or by the sweep at the next start.
 */
async function drainGateway(gateway: { server: { close(done: () => void): unknown; closeIdleConnections(): void }; close(): Promise<void> }, graceMs = 5_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const drained = new Promise<void>((resolve) => gateway.server.close(() => resolve()));
  const idle = setInterval(() => gateway.server.closeIdleConnections(), 50);
  gateway.server.closeIdleConnections();
  await Promise.race([drained, new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)))]);
  clearTimeout(timer);
  clearInterval(idle);
  await gateway.close();
}
