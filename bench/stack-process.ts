/**
 * The local stack as `npm start` runs it (local/stack.ts: the authorizer
 * cache, the pipeline with its idle backoff, each function in a worker
 * thread), in a process of its own so its CPU can be read from /proc apart
 * from the client's (bench/request-path.ts). Its store is on disk, as
 * `npm start` keeps it (DynamoDB Local with -dbPath, queues and objects in
 * files), in a fresh data directory removed at the end; BENCH_STORE=memory
 * runs DynamoDB Local in memory instead (the bench's figures before issue 30).
 * Other differences from `npm start`: free ports, the functions' logs off, and
 * an enterprise account made here instead of the demo one.
 *
 * Started with an IPC channel (bench/request-path.ts: startStackProcess); it
 * sends its endpoints once ready, and stops on 'stop' or when the channel
 * closes. BENCH_STACK_CPU_PROF=<dir> profiles it (profileThreads).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../local/ports.ts';

export interface StackProcessReady {
  baseUrl: string;
  dynamodbEndpoint: string;
  apiKey: string;
  accountId: string;
}

/** What the bench asks the stack process (each answered with `{ done: id, result }`). */
type Op = { op: 'createAccount'; name: string } | { op: 'pausePipeline' } | { op: 'resumePipeline' } | { op: 'drained' } | { op: 'createItems'; body: unknown };

/** Start the stack in a child process (its own process group) and wait until it answers. */
export function startStackProcess(): Promise<{
  child: ChildProcess;
  ready: StackProcessReady;
  /** An enterprise account made by the stack process (its store is not this process's). */
  createAccount(name: string): Promise<{ apiKey: string; accountId: string }>;
  /** Stop / start the stream's reading into the bus: a create's request path timed alone, its events left in the outbox. */
  pausePipeline(): Promise<void>;
  resumePipeline(): Promise<void>;
  /** Resolves once every event written so far has been handled by every consumer. */
  drained(): Promise<void>;
  /** The `TransactWriteItems` (DynamoDB JSON, as sent) of a ticket create of the bench account with the API's defaults. */
  createItems(body: unknown): Promise<unknown[]>;
  stop(): Promise<void>;
}> {
  if (process.env.BENCH_STACK_CPU_PROF) mkdirSync(process.env.BENCH_STACK_CPU_PROF, { recursive: true });
  const child = fork(import.meta.filename, [], { execArgv: ['--import', 'tsx'], env: { ...process.env, LOG_LEVEL: 'silent' }, detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // If the bench dies first, nothing of the stack (its JVM above all) is left running.
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  process.once('exit', killGroup);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`The stack process exited (${code}) before it was ready`)));
    let seq = 0;
    const waiting = new Map<number, (result: any) => void>();
    child.on('message', (m: { done?: number; result?: unknown }) => m.done && waiting.get(m.done)?.(m.result));
    /** One request to the stack process and its answer. */
    const ask = <T>(op: Op): Promise<T> =>
      new Promise((done) => {
        waiting.set(++seq, done);
        child.send({ ...op, id: seq });
      });
    child.once('message', (ready: StackProcessReady) =>
      resolve({
        child,
        ready,
        createAccount: (name) => ask({ op: 'createAccount', name }),
        pausePipeline: () => ask({ op: 'pausePipeline' }),
        resumePipeline: () => ask({ op: 'resumePipeline' }),
        drained: () => ask({ op: 'drained' }),
        createItems: (body) => ask({ op: 'createItems', body }),
        async stop() {
          child.send('stop');
          const timer = setTimeout(killGroup, 15_000);
          await exited;
          clearTimeout(timer);
          killGroup();
          process.off('exit', killGroup);
        },
      }),
    );
  });
}

/**
 * BENCH_STACK_CPU_PROF=<dir>: V8 CPU profiles of this process from now until
 * it stops, one per thread: the main thread and every function's worker
 * (attached through the inspector's NodeWorker domain, also those that start
 * later; `--cpu-prof` would miss them, as the runtime starts its workers
 * without this process's flags). A worker's file is named by the bundle it
 * runs.
 */
async function profileThreads(dir: string) {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  let seq = 0;
  const replies = new Map<number, (result: any) => void>();
  const toWorker = (sessionId: string, method: string) =>
    new Promise<any>((resolve) => {
      const id = ++seq;
      replies.set(id, resolve);
      void session.post('NodeWorker.sendMessageToWorker', { sessionId, message: JSON.stringify({ id, method }) });
    });
  session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
    const m = JSON.parse(params.message);
    if (m.id && replies.has(m.id)) replies.get(m.id)!(m.result);
  });
  const workers: string[] = [];
  session.on('NodeWorker.attachedToWorker', ({ params }) => {
    workers.push(params.sessionId);
    void toWorker(params.sessionId, 'Profiler.enable').then(() => toWorker(params.sessionId, 'Profiler.start'));
  });
  await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
  return {
    async write() {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(join(dir, 'main.cpuprofile'), JSON.stringify(profile));
      for (const w of workers) {
        const result = await Promise.race([toWorker(w, 'Profiler.stop'), new Promise((r) => setTimeout(r, 5000))]);
        const p = (result as { profile?: { nodes: Array<{ callFrame: { url: string } }> } } | undefined)?.profile;
        if (!p) continue;
        const bundle = p.nodes.map((n) => n.callFrame.url.match(/([^/]+)\/[^/]*\.m?js$/)?.[1]).find((u) => u && u !== 'lambda') ?? w;
        writeFileSync(join(dir, `worker-${bundle}-${w}.cpuprofile`), JSON.stringify(p));
      }
    },
  };
}

/**
 * A ticket create run here, by the tickets service as the tickets function runs it (the route's body schema, the
 * account owner's API-key principal), with its `TransactWriteItems` taken off this process's DynamoDB client as sent:
 * the items a create through the API writes (no Idempotency-Key), for the floor's bare transaction of the same items.
 */
async function createItems(acct: { accountId: string; owner: { id: string } }, body: unknown): Promise<unknown[]> {
  const { ddb } = await import('#shared/db/client.ts');
  const { ticketRoutes } = await import('#shared/tickets/contract.ts');
  const tickets = await import('#shared/tickets/service.ts');
  const route = ticketRoutes.find((r) => r.operationId === 'createTicket')!;
  const input = (route.body!.parse(body) as { ticket: Parameters<typeof tickets.createTicket>[1] }).ticket;
  let sent: unknown[] = [];
  const name = 'benchCreateItems';
  ddb.middlewareStack.add(
    (next, context) => async (args) => {
      const { body } = args.request as { body?: string | Uint8Array };
      if (context.commandName === 'TransactWriteItemsCommand' && body) sent = JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)).TransactItems;
      return next(args);
    },
    { step: 'build', name },
  );
  try {
    await tickets.createTicket({ accountId: acct.accountId, userId: acct.owner.id, role: 'owner', plan: 'enterprise', credential: 'api_key' }, input);
  } finally {
    ddb.middlewareStack.remove(name);
  }
  return sent;
}

if (process.argv[1] === import.meta.filename && process.send) {
  const { startLocalStack } = await import('../local/stack.ts');
  const dataDir = process.env.BENCH_STORE === 'memory' ? undefined : mkdtempSync(join(tmpdir(), 'support-desk-bench-'));
  const stack = await startLocalStack({ port: await freePort(), dynamodbPort: await freePort(), dataDir, sessionSecret: randomBytes(48).toString('base64url') });
  const accounts = await import('#shared/accounts/service.ts');
  const acct = await accounts.createAccount({ name: 'Bench', plan: 'enterprise', ownerEmail: 'owner@bench.example' });
  const ready: StackProcessReady = { baseUrl: stack.baseUrl, dynamodbEndpoint: stack.dynamodbEndpoint, apiKey: acct.apiKey, accountId: acct.accountId };
  const profDir = process.env.BENCH_STACK_CPU_PROF;
  const profiles = profDir ? await profileThreads(profDir) : undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await profiles?.write();
    await stack.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  };
  let n = 0;
  const answer = async (m: Op & { id: number }): Promise<unknown> => {
    if (m.op === 'createAccount') {
      const a = await accounts.createAccount({ name: m.name, plan: 'enterprise', ownerEmail: `owner-${n++}@${m.id}.bench.example` });
      return { apiKey: a.apiKey, accountId: a.accountId };
    }
    if (m.op === 'pausePipeline') return stack.publisher.stop();
    if (m.op === 'resumePipeline') return stack.publisher.start();
    if (m.op === 'drained') return stack.drained();
    return createItems(acct, m.body);
  };
  process.on('message', async (m: 'stop' | (Op & { id: number })) => {
    if (m === 'stop') return void stop();
    process.send!({ done: m.id, result: await answer(m) });
  });
  process.on('disconnect', () => void stop());
  if (profDir) {
    // What the main thread sends from now on (the pipeline's pollers, the bus): HTTP requests by target, written as it stops.
    const calls: Record<string, number> = {};
    const { subscribe } = await import('node:diagnostics_channel');
    subscribe('http.client.request.start', (msg) => {
      const req = (msg as { request: import('node:http').ClientRequest }).request;
      const what = String(req.getHeader('x-amz-target') ?? `${req.method} ${req.path.split('?')[0]}`);
      const key = `${String(req.getHeader('host'))} ${what}`;
      calls[key] = (calls[key] ?? 0) + 1;
    });
    process.once('exit', () => writeFileSync(join(profDir, 'main-thread-calls.json'), JSON.stringify(calls, null, 2)));
  }
  process.send(ready);
}
