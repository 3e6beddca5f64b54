import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { ensureTable, startDynamoDbLocal } from './dynamodb-local.ts';
import type { GatewayExtras } from './gateway.ts';
import { installLocalBus } from '#shared/events/bus.ts';
import { pipelineEnvVars, startLocalSqs } from './pipeline.ts';

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
  return { port: int(envVars.PORT, 3000), dynamodbPort: int(envVars.DYNAMODB_PORT, 8000), sqsPort: int(envVars.SQS_PORT, 0), dataDir: resolve(envVars.DATA_DIR || '.data') };
}

/** The local HS256 secret, created once per data directory so tokens survive restarts. */
export function localSessionSecret(dataDir: string): string {
  const file = join(dataDir, 'local-secrets.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')).sessionSecret;
  mkdirSync(dataDir, { recursive: true });
  const sessionSecret = randomBytes(48).toString('base64url');
  writeFileSync(file, JSON.stringify({ sessionSecret }, null, 2), { mode: 0o600 });
  return sessionSecret;
}

/**
 * Point this process's handlers at the local emulators. Must run before any
 * handler module is imported: they read the environment once, at load.
 */
export function configureLocalEnv(opts: { dynamodbEndpoint: string; sessionSecret: string; tableName?: string; sqsEndpoint?: string }) {
  process.env.TABLE_NAME = opts.tableName ?? LOCAL_TABLE;
  process.env.AWS_REGION = LOCAL_REGION;
  process.env.DYNAMODB_ENDPOINT = opts.dynamodbEndpoint;
  process.env.SESSION_SECRET = opts.sessionSecret;
  // The SDK must never reach for real credentials locally.
  process.env.AWS_ACCESS_KEY_ID = 'local';
  process.env.AWS_SECRET_ACCESS_KEY = 'local';
  if (opts.sqsEndpoint) {
    Object.assign(process.env, pipelineEnvVars(opts.sqsEndpoint));
    installLocalBus(async () => (await import('./bus.ts')).localBus());
    // Local receivers live on this machine with self-signed certificates; a deployed stack never sets these
    // (the SSRF guard and certificate checks stay on). Set either to 0 to try the deployed behaviour locally.
    process.env.WEBHOOK_ALLOW_PRIVATE_TARGETS ??= '1';
    process.env.WEBHOOK_ALLOW_INSECURE_TLS ??= '1';
  }
}

/** The pages the local gateway serves without auth: health, the OpenAPI document, and the API reference with its assets. */
export async function localPages(): Promise<NonNullable<GatewayExtras['pages']>> {
  const { openApiDocument } = await import('#shared/openapi/document.ts');
  const { DOCS_ASSETS, DOCS_PAGE } = await import('#shared/openapi/docs-page.ts');
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

export interface LocalStack {
  baseUrl: string;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  stop(): Promise<void>;
}

/**
 * Bring up the whole local stack: DynamoDB Local (persisted under dataDir, or
 * in memory), the table, fauxqs with the topology's queues, the event
 * pipeline (stream -> publisher -> bus -> queues -> consumers), and the
 * gateway in front of the same handlers.
 */
export async function startLocalStack(opts: { port: number; dynamodbPort: number; sqsPort?: number; dataDir?: string; sessionSecret: string }): Promise<LocalStack> {
  const dynamo = await startDynamoDbLocal(opts.dynamodbPort, opts.dataDir ? join(opts.dataDir, 'dynamodb') : undefined);
  const stops: Array<() => Promise<void>> = [() => dynamo.stop()];
  const stopAll = async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
  try {
    const sqs = await startLocalSqs(opts.sqsPort ?? 0, LOCAL_REGION);
    stops.push(() => sqs.stop());
    configureLocalEnv({ dynamodbEndpoint: dynamo.endpoint, sessionSecret: opts.sessionSecret, sqsEndpoint: sqs.endpoint });
    // The background consumers' ports, local flavour, unless the caller chose otherwise.
    if (!process.env.EMAIL_TRANSPORT) Object.assign(process.env, { EMAIL_TRANSPORT: 'file', EMAIL_OUTBOX_DIR: join(opts.dataDir ?? tmpdir(), 'emails') });
    if (!process.env.ENRICHMENT_PROVIDER) Object.assign(process.env, { ENRICHMENT_PROVIDER: 'file', ENRICHMENT_FILE: join(import.meta.dirname, '..', 'data', 'companies.json') });
    await ensureTable(dynamo.endpoint, LOCAL_TABLE);
    const { startPipeline } = await import('./pipeline.ts');
    const pipeline = await startPipeline({ dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, tableName: LOCAL_TABLE, region: LOCAL_REGION });
    stops.push(() => pipeline.stop());
    const { startGateway } = await import('./gateway.ts');
    const gateway = await startGateway(opts.port, { pages: await localPages() });
    stops.push(() => gateway.close());
    return { baseUrl: gateway.url, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
