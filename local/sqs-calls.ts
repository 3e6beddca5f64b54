/**
 * The local stack's own SQS calls: the bus delivering to its rules' target
 * queues and the pollers that stand in for Lambda's event-source mappings.
 * In AWS neither is our code or our CPU. Locally they ran as SDK calls over
 * HTTP to fauxqs, which runs in the same process: per created ticket some 14
 * signed requests, parsed again on the other side, most of the stack's own
 * CPU per create (issue 21, docs/performance.md).
 *
 * When the queues' fauxqs runs in this process, the same calls go straight to
 * its request handlers (the functions its HTTP router calls with the parsed
 * body) on its store: the same validation, the same errors (SqsError, with
 * the code SQS answers), the same persistence and visibility rules, without
 * the SDK and HTTP in between. The functions' own SQS calls (a consumer
 * scheduling a retry, the admin CLI) still go over HTTP: that is deployed code.
 * Another fauxqs version, whose handlers are not where 2.4.1 keeps them, gets
 * the SDK client as before.
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type ChangeMessageVisibilityBatchCommandOutput,
  type DeleteMessageBatchCommandOutput,
  type GetQueueAttributesCommandOutput,
  type ReceiveMessageCommandOutput,
  type SendMessageCommandOutput,
} from '@aws-sdk/client-sqs';
import type { FauxqsServer } from 'fauxqs';
import { withoutSdkLogger } from '#shared/sdk-client.ts';

/** The SQS calls the bus and the pollers make: an SQSClient, or fauxqs's handlers in process. */
export interface SqsCalls {
  send(command: ReceiveMessageCommand): Promise<ReceiveMessageCommandOutput>;
  send(command: DeleteMessageBatchCommand): Promise<DeleteMessageBatchCommandOutput>;
  send(command: ChangeMessageVisibilityBatchCommand): Promise<ChangeMessageVisibilityBatchCommandOutput>;
  send(command: SendMessageCommand): Promise<SendMessageCommandOutput>;
  send(command: GetQueueAttributesCommand): Promise<GetQueueAttributesCommandOutput>;
  /** Wake every receive waiting in process (stopping: a long poll need not run out). */
  wakeReceives(): void;
  destroy(): void;
}

type Handler = (body: unknown, store: unknown) => unknown;
interface FauxqsStore {
  queues: Map<string, { cancelWaiters(): void }>;
  /** With a data directory: the SQLite every change is written through to (node:sqlite, fauxqs's PersistenceManager). */
  persistence?: { db?: { exec(sql: string): void } };
}

const handlerFile = (name: string) => new URL(`./sqs/actions/${name}.js`, import.meta.resolve('fauxqs')).href;

/** An SDK command class, as the key of its handler. */
type CommandClass = abstract new (...args: never[]) => unknown;

/** fauxqs's handlers by the SDK command they answer; undefined on a fauxqs that does not have them. */
async function loadHandlers(): Promise<Map<CommandClass, Handler> | undefined> {
  const names = [
    [ReceiveMessageCommand, 'receiveMessage'],
    [DeleteMessageBatchCommand, 'deleteMessageBatch'],
    [ChangeMessageVisibilityBatchCommand, 'changeMessageVisibilityBatch'],
    [SendMessageCommand, 'sendMessage'],
    [GetQueueAttributesCommand, 'getQueueAttributes'],
  ] as const;
  try {
    const handlers = new Map<CommandClass, Handler>();
    for (const [command, name] of names) {
      const fn = ((await import(handlerFile(name))) as Record<string, unknown>)[name];
      if (typeof fn !== 'function') return undefined;
      handlers.set(command, fn as Handler);
    }
    return handlers;
  } catch {
    return undefined;
  }
}

/**
 * The store behind a running fauxqs. fauxqs does not export it; its server's
 * `inspectQueue` calls the store's own method, which is watched for that one call.
 */
async function storeOf(server: FauxqsServer): Promise<FauxqsStore | undefined> {
  try {
    const { SqsStore } = (await import(new URL('./sqs/sqsStore.js', import.meta.resolve('fauxqs')).href)) as { SqsStore?: { prototype: Record<string, unknown> } };
    const proto = SqsStore?.prototype as { inspectQueue?: (this: FauxqsStore, name: string) => unknown } | undefined;
    const original = proto?.inspectQueue;
    if (!proto || typeof original !== 'function') return undefined;
    const seen: FauxqsStore[] = [];
    proto.inspectQueue = function inspectQueue(name) {
      seen.push(this);
      return original.call(this, name);
    };
    try {
      server.inspectQueue('');
    } finally {
      proto.inspectQueue = original;
    }
    const [store] = seen;
    return store?.queues instanceof Map ? store : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The persisted queues commit without an fsync each. fauxqs writes every send, receive and delete through to its
 * SQLite (WAL) on this process's main thread, and SQLite's default then syncs the log at every commit: under a burst
 * that blocked the main thread, and with it the gateway, the bus and every poller, for about 10 s of a 200 s bench
 * run (docs/performance.md, stop 52). With synchronous=NORMAL a commit has reached the operating system when it
 * returns, so the queues survive a crash or a kill of this process, as the README promises; only a power loss or a
 * crash of the machine can lose the last changes. Returns whether it applied (false: no persistence, or a fauxqs
 * whose store it cannot reach).
 */
export async function commitWithoutFsync(server: FauxqsServer): Promise<boolean> {
  const db = (await storeOf(server))?.persistence?.db;
  if (!db) return false;
  db.exec('PRAGMA synchronous = NORMAL');
  return true;
}

/** The fauxqs servers of this process, by endpoint. */
const inProcess = new Map<string, SqsCalls>();

/** Make a fauxqs started in this process reachable in process at its endpoint (local/sqs-emulator.ts, startLocalSqs). */
export async function serveInProcess(server: FauxqsServer): Promise<() => void> {
  const [handlers, store] = await Promise.all([loadHandlers(), storeOf(server)]);
  if (!handlers || !store) return () => {};
  const calls = {
    async send(command: { input: unknown }) {
      const handler = handlers.get(command.constructor as CommandClass);
      if (!handler) throw new Error(`No in-process SQS handler for ${command.constructor.name}`);
      try {
        // A copy, as the wire would give: the handlers may keep or change what they are given.
        return { $metadata: {}, ...((await handler(structuredClone(command.input), store)) as object) };
      } catch (err) {
        // Named by SQS's error code, as the SDK names the error it parses from the answer.
        const code = (err as { code?: unknown }).code;
        if (typeof code === 'string') (err as Error).name = code;
        throw err;
      }
    },
    wakeReceives: () => store.queues.forEach((q) => q.cancelWaiters()),
    destroy: () => {},
  } as SqsCalls;
  inProcess.set(server.address, calls);
  return () => {
    if (inProcess.get(server.address) === calls) inProcess.delete(server.address);
  };
}

/** The SQS calls to the emulator at `endpoint`: in process when it runs here, else an SDK client. */
export function sqsCalls(endpoint: string, region: string): SqsCalls {
  const local = inProcess.get(endpoint);
  if (local) return local;
  const client = withoutSdkLogger(new SQSClient({ region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }));
  return { send: client.send.bind(client) as SqsCalls['send'], wakeReceives: () => {}, destroy: () => client.destroy() };
}
