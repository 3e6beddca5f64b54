/**
 * Baselines measured in processes of their own (issue 21): a baseline run in
 * the bench's process shares its event loop, its heap and its CPU with the
 * gateway, the client and the load it is compared with, and is slowed by them,
 * which flatters the ratio.
 *
 *   - the floor server: a bare `node:http` server doing a route's one
 *     DynamoDB call (GetItem, a Query of 25, a 2-item TransactWriteItems) with
 *     the functions' DynamoDB client (shared/db/client.ts) on the same
 *     DynamoDB Local: what a request costs with nothing else on its path;
 *   - bare calls: the same client calling DynamoDB Local in a loop, for the
 *     latency (concurrency 1) and the throughput (concurrency N) of a bare call.
 *
 * Each is this file in a child process with an IPC channel (startFloor,
 * startBare); the parent keeps the process ids to read their CPU from /proc.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A bare call of an access pattern. `endpoint` sends it elsewhere than DynamoDB Local (the counting proxy). */
export type BareCallSpec =
  | { kind: 'get'; keys: Array<{ pk: string; sk: string }>; endpoint?: string }
  | { kind: 'query'; pk: string; prefix: string; limit: number; endpoint?: string }
  | { kind: 'tx2'; pk: string; endpoint?: string }
  | { kind: 'txSame'; endpoint?: string };

export interface FloorTarget {
  dynamodbEndpoint: string;
  tableName: string;
  /** The account whose tickets the floor reads (its writes go under a partition of their own). */
  accountId: string;
  /**
   * The `TransactWriteItems` of one of the stack's ticket creates (DynamoDB JSON, bench/stack-process.ts createItems):
   * the floor's `POST /tickets/same-items` and the `txSame` bare call write these items again, each time under new ids.
   */
  createItems?: unknown[];
}

type Ask = { op: 'latency'; call: BareCallSpec; n: number; warmup: number } | { op: 'throughput'; call: BareCallSpec; total: number; concurrency: number };
type Request = { id: number } & Ask;

function spawnChild(mode: 'floor' | 'bare', target: FloorTarget): ChildProcess {
  let itemsFile = '';
  if (target.createItems) {
    itemsFile = join(mkdtempSync(join(tmpdir(), 'bench-floor-')), 'create-items.json');
    writeFileSync(itemsFile, JSON.stringify(target.createItems));
  }
  return fork(import.meta.filename, [mode], {
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      TABLE_NAME: target.tableName,
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      DYNAMODB_ENDPOINT: target.dynamodbEndpoint,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      FLOOR_ACCOUNT: target.accountId,
      FLOOR_CREATE_ITEMS: itemsFile,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

const stopChild = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });

/** The floor server in a child process: its URL and pid. */
export function startFloor(target: FloorTarget): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawnChild('floor', target);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`floor server exited (${code})`)));
    child.once('message', (m: { url: string }) => resolve({ url: m.url, pid: child.pid!, stop: () => stopChild(child) }));
  });
}

/** The bare-call runner in a child process, once it listens. */
export async function startBare(target: FloorTarget) {
  const child = spawnChild('bare', target);
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare-call process exited (${code})`)));
    child.once('message', () => resolve());
  });
  let seq = 0;
  const waiting = new Map<number, { resolve: (m: any) => void; reject: (err: Error) => void }>();
  child.on('message', (m: { id: number }) => waiting.get(m.id)?.resolve(m));
  // A call that fails in the child ends it (an unhandled rejection): the bench fails then instead of waiting forever.
  child.once('exit', (code) => [...waiting.values()].forEach((w) => w.reject(new Error(`bare-call process exited (${code})`))));
  const ask = <T>(req: Ask): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = ++seq;
      const done = () => waiting.delete(id);
      waiting.set(id, { resolve: (m) => (done(), resolve(m)), reject: (err) => (done(), reject(err)) });
      child.send({ ...req, id });
    });
  return {
    pid: child.pid!,
    /** Milliseconds of each of `n` sequential calls, after `warmup` unmeasured ones. */
    latency: async (call: BareCallSpec, n: number, warmup = 50) => (await ask<{ ms: number[] }>({ op: 'latency', call, n, warmup })).ms,
    /** Calls per second with `concurrency` in flight, `total` in all. */
    throughput: async (call: BareCallSpec, total: number, concurrency: number) => (await ask<{ perSecond: number }>({ op: 'throughput', call, total, concurrency })).perSecond,
    stop: () => stopChild(child),
  };
}

// ---- The child side.

async function childMain(mode: string) {
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { DynamoDBDocumentClient, GetCommand, QueryCommand, TransactWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const { ddb, tableName, DDB_TIMEOUTS } = await import('#shared/db/client.ts');
  const { keys } = await import('#shared/db/keys.ts');
  const table = tableName();
  const clients = new Map<string, typeof ddb>();
  /** The functions' client, or one configured like it on another endpoint. */
  const client = (endpoint?: string) => {
    if (!endpoint) return ddb;
    if (!clients.has(endpoint))
      clients.set(
        endpoint,
        DynamoDBDocumentClient.from(
          new DynamoDBClient({ region: process.env.AWS_REGION, maxAttempts: 3, requestHandler: { ...DDB_TIMEOUTS }, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
          { marshallOptions: { removeUndefinedValues: true } },
        ),
      );
    return clients.get(endpoint)!;
  };
  let seq = 0;
  const get = (key: { pk: string; sk: string }, endpoint?: string) => client(endpoint).send(new GetCommand({ TableName: table, Key: key }));
  const query = (pk: string, prefix: string, limit: number, endpoint?: string) =>
    client(endpoint).send(
      new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': pk, ':p': prefix }, Limit: limit, ScanIndexForward: false }),
    );
  /** A record and its outbox item, as a create writes them; the keys are outside every access pattern, so the stream poller drops them. */
  const tx2 = (pk: string, record: Record<string, unknown>, endpoint?: string) => {
    const id = `${Date.now()}-${process.pid}-${seq++}`;
    return client(endpoint).send(
      new TransactWriteCommand({
        TransactItems: [
          { Put: { TableName: table, Item: { pk, sk: `BENCH#${id}`, ...record }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: table, Item: { pk, sk: `BENCHOUTBOX#${id}`, detail: record } } },
        ],
      }),
    );
  };
  const RECORD = { subject: 'Bench', status: 'new', priority: 'normal', payload: 'x'.repeat(200) };
  const same = process.env.FLOOR_CREATE_ITEMS ? await sameItems(JSON.parse(readFileSync(process.env.FLOOR_CREATE_ITEMS, 'utf8')) as unknown[], process.env.FLOOR_ACCOUNT!) : undefined;
  const txSame = (endpoint?: string) => client(endpoint).send(new TransactWriteCommand({ TransactItems: same!(seq++) as never }));
  const bareCall = (c: BareCallSpec): (() => Promise<unknown>) => {
    if (c.kind === 'get') return () => get(c.keys[seq++ % c.keys.length], c.endpoint);
    if (c.kind === 'query') return () => query(c.pk, c.prefix, c.limit, c.endpoint);
    if (c.kind === 'txSame') return () => txSame(c.endpoint);
    return () => tx2(c.pk, RECORD, c.endpoint);
  };

  if (mode === 'bare') {
    process.on('message', async (req: Request) => {
      const call = bareCall(req.call);
      if (req.op === 'latency') {
        for (let i = 0; i < req.warmup; i++) await call();
        const ms: number[] = [];
        for (let i = 0; i < req.n; i++) {
          const t = performance.now();
          await call();
          ms.push(performance.now() - t);
        }
        process.send!({ id: req.id, ms });
      } else {
        let left = req.total;
        const t0 = performance.now();
        await Promise.all(
          Array.from({ length: req.concurrency }, async () => {
            while (left-- > 0) await call();
          }),
        );
        process.send!({ id: req.id, perSecond: req.total / ((performance.now() - t0) / 1000) });
      }
    });
    process.send!({ ready: true });
    return;
  }

  // The floor server: each route's one call and a JSON answer, nothing else.
  const { createServer } = await import('node:http');
  const accountId = process.env.FLOOR_ACCOUNT!;
  const pk = keys.accountPk(accountId);
  const writesPk = `BENCHFLOOR#${accountId}`;
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    res.end(text);
  };
  const server: Server = createServer(async (req, res) => {
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method === 'GET' && path.startsWith('/tickets/')) {
        const { Item } = await get(keys.ticket(accountId, path.slice('/tickets/'.length)));
        return Item ? json(res, 200, { ticket: Item }) : json(res, 404, { error: 'not found' });
      }
      if (req.method === 'GET' && path === '/tickets') return json(res, 200, { tickets: (await query(pk, keys.ticketPrefix, 25)).Items ?? [] });
      if (req.method === 'POST' && path === '/tickets/same-items') {
        for await (const c of req) void c;
        await txSame();
        return json(res, 201, { ticket: RECORD });
      }
      if (req.method === 'POST' && path === '/tickets') {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const record = { ...RECORD, ...body.ticket };
        await tx2(writesPk, record);
        return json(res, 201, { ticket: record });
      }
      json(res, 404, { error: 'not found' });
    } catch (err) {
      json(res, 500, { error: String(err) });
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  process.send!({ url: `http://127.0.0.1:${port}` });
}

/**
 * The create's items ready to be written again: the n-th time, every id of the create (a ticket's, its events', its
 * audit's: `prefix_` and a ULID) but the account's and the user's gets a suffix of its own (the process's and n), so each write makes new
 * items as a create does; the outbox item gets another type, so the stack's stream filter drops it and nothing of the
 * floor's reaches the pipeline. Items as the DocumentClient takes them (unmarshalled), sent with the functions' client.
 */
async function sameItems(sent: unknown[], accountId: string): Promise<(n: number) => unknown[]> {
  const { unmarshall } = await import('@aws-sdk/util-dynamodb');
  const text = JSON.stringify(sent).replaceAll('{"S":"outbox"}', '{"S":"bench-floor-outbox"}');
  // The ULID part of each id, matched in any case: a ticket's search words hold its id in lower case.
  const ulids = [...new Set(text.match(/\b[a-z]+_[0-9A-HJKMNP-TV-Z]{26}\b/g) ?? [])].filter((id) => id !== accountId && !id.startsWith('usr_')).map((id) => id.slice(id.indexOf('_') + 1));
  const pattern = new RegExp(ulids.join('|'), 'gi');
  // The floor server and the bare-call process write side by side: a suffix of this process's own.
  const own = `${process.pid.toString(36)}x`;
  const plain = (op: Record<string, any>) => ({
    ...op,
    ...(op.Item ? { Item: unmarshall(op.Item) } : {}),
    ...(op.Key ? { Key: unmarshall(op.Key) } : {}),
    ...(op.ExpressionAttributeValues ? { ExpressionAttributeValues: unmarshall(op.ExpressionAttributeValues) } : {}),
  });
  return (n) =>
    (JSON.parse(ulids.length ? text.replace(pattern, (ulid) => `${ulid}${own}${n}`) : text) as Array<Record<string, Record<string, any>>>).map((item) =>
      Object.fromEntries(Object.entries(item).map(([kind, op]) => [kind, plain(op)])),
    );
}

if (process.argv[1] === import.meta.filename && process.send) {
  process.on('disconnect', () => process.exit(0));
  await childMain(process.argv[2]);
}
