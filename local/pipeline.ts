/**
 * The event pipeline on the local stack, with the same handlers Lambda runs:
 *
 *   table stream (DynamoDB Local) -> outbox publisher -> local bus (topology rules)
 *     -> fauxqs queues -> SQS consumers (webhook fan-out, webhook delivery, email, enrichment)
 *
 * Pollers stand in for Lambda's event-source mappings: they build the same
 * DynamoDBStreamEvent / SQSEvent shapes, respect batch sizes, and honour
 * `batchItemFailures` the way Lambda does (failed stream records are retried
 * from their sequence number; failed SQS messages stay in the queue).
 */
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, DynamoDBStreamsClient, GetRecordsCommand, GetShardIteratorCommand, type _Record as StreamRecord, type ShardIteratorType } from '@aws-sdk/client-dynamodb-streams';
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import { serveInProcess, sqsCalls, type SqsCalls } from './sqs-calls.ts';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_CONCURRENCY, dlqName, OUTBOX_PUBLISHER, QUEUES, SCHEDULES, type QueueName } from '#app/topology.ts';
import { TABLE_KEYS } from '#shared/db/table-definition.ts';
import { randomUUID } from 'node:crypto';
import type { LocalLambda } from './lambda/index.ts';
import { LOCAL_ACCOUNT, localQueueUrl } from './lambda/index.ts';
import { matchesPattern } from './lambda/patterns.ts';
import { previousPort, RELEASE_SECONDS, releaseHeldMessages, rememberPort } from './sqs-state.ts';

const queueArn = (region: string, name: string) => `arn:aws:sqs:${region}:${LOCAL_ACCOUNT}:${name}`;

const log = (message: string, data?: Record<string, unknown>) => {
  if (process.env.LOG_LEVEL !== 'silent') console.log(JSON.stringify({ level: 'WARN', message, ...data }));
};

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * Start fauxqs in-process; the queues are the template's, created by createLocalQueues (local/lambda/queues.ts).
 * It serves S3 on the same endpoint (the template's buckets: local/lambda/buckets.ts); with `s3Dir` its objects are
 * files there (DATA_DIR/s3), kept across restarts, otherwise in memory.
 * With `dataDir` the queues live there (SQLite, written through on every change) and survive a restart, even
 * after a SIGKILL: the last run's port is kept when `port` is 0 (the persisted queues' URLs carry it), and what
 * the last run was holding is visible again (local/sqs-state.ts).
 */
export async function startLocalSqs(port: number, opts: { s3Dir?: string; dataDir?: string } = {}): Promise<LocalSqs> {
  const { dataDir } = opts;
  const server = await startFauxqs({ port: port || (dataDir ? await previousPort(dataDir) : 0), logger: false, dataDir, ...(opts.s3Dir ? { s3StorageDir: opts.s3Dir } : {}) });
  if (dataDir) {
    const sqs = new SQSClient({ region: 'us-east-1', endpoint: server.address, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    try {
      await releaseHeldMessages(server, sqs);
      rememberPort(dataDir, server.port);
    } catch (err) {
      await server.stop();
      throw err;
    } finally {
      sqs.destroy();
    }
  }
  // The stack's own calls to it (the bus, the pollers) go to it in process (local/sqs-calls.ts).
  const unserve = await serveInProcess(server);
  return {
    endpoint: server.address,
    stop: () => {
      unserve();
      return server.stop();
    },
  };
}

/** The queue settings this process's own tools read (dead-letter listing, redrive, tests' fixtures). */
export function pipelineEnvVars(sqsEndpoint: string): Record<string, string> {
  const vars: Record<string, string> = { SQS_ENDPOINT: sqsEndpoint };
  for (const q of QUEUES) {
    if (q.urlEnv) vars[q.urlEnv] = localQueueUrl(sqsEndpoint, q.name);
    if (q.dlqUrlEnv) vars[q.dlqUrlEnv] = localQueueUrl(sqsEndpoint, dlqName(q.name));
  }
  return vars;
}

/** GetRecords' largest Limit. */
const GET_RECORDS_MAX = 1000;

/** The longest pause between reads of an idle stream: the first event after a quiet spell waits at most this long. */
const IDLE_STREAM_MAX_MS = 500;

type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

/** Lambda's shape of a stream record (numbers where the SDK gives Dates). */
function toLambdaRecord(r: StreamRecord, streamArn: string, region: string): DynamoDBRecord {
  const { ApproximateCreationDateTime, ...rest } = r.dynamodb ?? {};
  return {
    eventID: r.eventID,
    eventName: r.eventName as DynamoDBRecord['eventName'],
    eventVersion: r.eventVersion ?? '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: region,
    eventSourceARN: streamArn,
    dynamodb: { ...(rest as DynamoDBRecord['dynamodb']), ApproximateCreationDateTime: ApproximateCreationDateTime ? Math.floor(new Date(ApproximateCreationDateTime).getTime() / 1000) : undefined },
  };
}

/** A stable small hash of a record's partition key: its lane under a ParallelizationFactor. */
export function laneOf(r: DynamoDBRecord, lanes: number): number {
  const key = JSON.stringify(r.dynamodb?.Keys?.[TABLE_KEYS.partitionKey] ?? null);
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % lanes;
}

/** Records a parallel stream poller holds read but not yet handed over, at most (then it waits before reading on). */
const STREAM_BUFFER = 2_000;

/**
 * Lambda's ParallelizationFactor for one stream mapping: records go to
 * `parallel` lanes by partition key; each lane hands its records to `invoke`
 * in order, up to `batchSize` at a time, one batch after another, and the
 * lanes run side by side. A lane's records that arrive while it works wait
 * for its next batch.
 */
export class StreamLanes {
  private readonly lanes: DynamoDBRecord[][];
  private readonly running = new Set<Promise<void>>();
  private readonly busy = new Set<number>();
  private readonly readers: (() => void)[] = [];
  /** Records handed in and not yet taken into a batch. */
  buffered = 0;

  constructor(
    private readonly parallel: number,
    private readonly batchSize: number,
    private readonly invoke: (records: DynamoDBRecord[]) => Promise<void>,
    private readonly limit = STREAM_BUFFER,
  ) {
    this.lanes = Array.from({ length: parallel }, () => []);
  }

  /** Hand records over; resolves once fewer than the limit wait (bounded read-ahead). */
  async add(records: DynamoDBRecord[]): Promise<void> {
    for (const r of records) this.lanes[laneOf(r, this.parallel)].push(r);
    this.buffered += records.length;
    this.lanes.forEach((_, i) => this.run(i));
    while (this.buffered >= this.limit) await new Promise<void>((resolve) => this.readers.push(resolve));
  }

  /** Every record handed over so far has been invoked. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.all(this.running);
  }

  private run(i: number) {
    const pending = this.lanes[i];
    if (this.busy.has(i) || !pending.length) return;
    this.busy.add(i);
    const run = (async () => {
      while (pending.length) {
        const batch = pending.splice(0, this.batchSize);
        this.buffered -= batch.length;
        if (this.buffered < this.limit) this.readers.splice(0).forEach((wake) => wake());
        await this.invoke(batch);
      }
      this.busy.delete(i);
    })();
    this.running.add(run);
    void run.finally(() => this.running.delete(run));
  }
}

/**
 * Polls every shard of the table's stream and feeds the handler, like a
 * Lambda stream mapping. With `parallel` 1 it is strictly in order, one shard
 * batch at a time, and a reported failure (or a throw) re-reads the shard from
 * the failed record (ReportBatchItemFailures). With `parallel` N (the
 * mapping's ParallelizationFactor) it works as Lambda does: the records go to
 * N lanes by their partition key, each lane hands its records over in order,
 * one batch at a time, and the lanes run side by side while the shard is read
 * on. An account's items share a partition key, so one account's backlog
 * holds up its own lane only, never a quiet account's events. A failed batch
 * is retried on its own a few times, then left behind as maxRecordAge would
 * (the outbox sweeper covers it). New shards are picked up as DynamoDB rolls them.
 */
class StreamPoller {
  private shards = new Map<string, { iterator?: string; lastSeq?: string }>();
  private finished = new Set<string>();
  private running = false;
  private loop?: Promise<void>;
  private streamArn = '';
  /** Parallel mode: the mapping's lanes. */
  private readonly lanes: StreamLanes;

  constructor(
    private readonly ddb: DynamoDBClient,
    private readonly streams: DynamoDBStreamsClient,
    private readonly table: string,
    private readonly region: string,
    private readonly handler: StreamHandler,
    private readonly intervalMs: number,
    private readonly batchSize: number,
    /** Like a Lambda event filter: records it rejects never reach the handler. */
    private readonly filter: (r: DynamoDBRecord) => boolean = () => true,
    private readonly parallel = 1,
    private readonly idleMaxMs = IDLE_STREAM_MAX_MS,
  ) {
    this.lanes = new StreamLanes(parallel, batchSize, (records) => this.invoke({ Records: records }));
  }

  /** One batch handled on its own (parallel mode): retried a few times like Lambda would, then skipped. */
  private async invoke(event: DynamoDBStreamEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.handler(event);
        if (!res?.batchItemFailures?.length) return;
      } catch (err) {
        log('stream poller: handler failed', { attempt, err: (err as Error).message });
      }
      if (attempt >= 3) {
        log('stream poller: batch skipped after retries; the outbox sweeper publishes what it held', { records: event.Records.length });
        return;
      }
      await sleep(200 * attempt);
    }
  }

  private async iterator(shardId: string, type: ShardIteratorType, seq?: string): Promise<string | undefined> {
    const out = await this.streams.send(new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: seq }));
    return out.ShardIterator;
  }

  /** Find shards; those open at start are read from their tip, shards that appear later from their beginning. */
  private async discover(initial: boolean) {
    let start: string | undefined;
    do {
      const out = await this.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }));
      for (const shard of out.StreamDescription?.Shards ?? []) {
        const id = shard.ShardId!;
        if (this.shards.has(id) || this.finished.has(id)) continue;
        const closed = shard.SequenceNumberRange?.EndingSequenceNumber !== undefined;
        if (initial && closed) {
          this.finished.add(id);
          continue;
        }
        this.shards.set(id, { iterator: await this.iterator(id, initial ? 'LATEST' : 'TRIM_HORIZON') });
      }
      start = out.StreamDescription?.LastEvaluatedShardId;
    } while (start);
  }

  async start() {
    if (this.running) return;
    if (!this.streamArn) {
      const table = await this.ddb.send(new DescribeTableCommand({ TableName: this.table }));
      this.streamArn = table.Table?.LatestStreamArn ?? '';
      if (!this.streamArn) throw new Error(`Table ${this.table} has no stream`);
      await this.discover(true);
    } else {
      // Resuming: an iterator may have expired while paused; continue after the last record handled.
      for (const [id, s] of this.shards) s.iterator = s.lastSeq ? await this.iterator(id, 'AFTER_SEQUENCE_NUMBER', s.lastSeq) : s.iterator;
    }
    this.running = true;
    this.loop = this.run();
  }

  async stop() {
    this.running = false;
    await this.loop;
    await this.lanes.idle();
  }

  private async run() {
    let rounds = 0;
    // An idle stream is read less and less often (up to IDLE_STREAM_MAX_MS apart); a record resets the pace.
    let idleMs = this.intervalMs;
    while (this.running) {
      try {
        if (rounds++ % 25 === 0) await this.discover(false);
        let busy = false;
        // Shards are independent (Lambda runs one mapping per shard), so they are read side by side.
        await Promise.all([...this.shards].map(async ([id, shard]) => (busy = (await this.pollShard(id, shard)) || busy)));
        // Under load, read on at once: the interval only paces an idle stream.
        if (busy) {
          idleMs = this.intervalMs;
          continue;
        }
      } catch (err) {
        log('stream poller: error, retrying', { err: (err as Error).message });
      }
      await sleep(idleMs);
      idleMs = Math.min(Math.max(this.intervalMs, this.idleMaxMs), idleMs * 2);
    }
  }

  /** Read one batch of a shard and hand it to the handler; true when the shard had records. */
  private async pollShard(id: string, shard: { iterator?: string; lastSeq?: string }): Promise<boolean> {
    if (!shard.iterator) {
      this.shards.delete(id);
      this.finished.add(id);
      return false;
    }
    let out;
    try {
      // In parallel mode a read takes what the shard has (up to GetRecords' maximum) and batches what passes the
      // filter, as Lambda batches filtered records: most of the table's records are not outbox items, and reading
      // batchSize raw records at a time handed the publisher batches of a few events each (issue 21).
      out = await this.streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: this.parallel > 1 ? GET_RECORDS_MAX : this.batchSize }));
    } catch (err) {
      if ((err as Error).name !== 'ExpiredIteratorException') throw err;
      shard.iterator = await this.iterator(id, shard.lastSeq ? 'AFTER_SEQUENCE_NUMBER' : 'LATEST', shard.lastSeq);
      return false;
    }
    const all = out.Records ?? [];
    const records = all.map((r) => toLambdaRecord(r, this.streamArn, this.region)).filter(this.filter);
    if (records.length && this.parallel > 1) {
      await this.lanes.add(records);
    } else if (records.length) {
      let failedSeq: string | undefined;
      try {
        const res = await this.handler({ Records: records });
        failedSeq = res?.batchItemFailures?.[0]?.itemIdentifier;
      } catch (err) {
        log('stream poller: handler failed; retrying the batch', { err: (err as Error).message });
        failedSeq = records[0].dynamodb!.SequenceNumber;
      }
      if (failedSeq) {
        shard.iterator = await this.iterator(id, 'AT_SEQUENCE_NUMBER', failedSeq);
        return false;
      }
    }
    if (all.length) shard.lastSeq = all[all.length - 1].dynamodb!.SequenceNumber;
    shard.iterator = out.NextShardIterator;
    return all.length > 0;
  }
}

type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

/** What a poller knows of its queue and mapping (from the template). */
export interface PollerQueue {
  name: string;
  batchSize: number;
  visibilityTimeoutSeconds: number;
}

function toSqsRecord(m: Message, arn: string, region: string): SQSRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? LOCAL_ACCOUNT,
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}

/** Invoke a queue's consumer with received messages, as Lambda does: what it does not report failed is deleted. */
async function consumeBatch(sqs: SqsCalls, def: PollerQueue, url: string, arn: string, region: string, handler: SqsHandler, messages: Message[]): Promise<void> {
  let failed: Set<string>;
  try {
    const res = await handler({ Records: messages.map((m) => toSqsRecord(m, arn, region)) });
    failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch (err) {
    log(`${def.name}: consumer threw; the whole batch returns to the queue`, { err: (err as Error).message });
    failed = new Set(messages.map((m) => m.MessageId!));
  }
  const done = messages.filter((m) => !failed.has(m.MessageId!));
  if (done.length) await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
}

/** A received message of a fair queue waiting for a worker, with its group and when it was (last) made invisible. */
export interface Buffered {
  message: Message;
  group: string;
  hiddenAt: number;
}

/**
 * The message group of a fair queue's message. Every message sent to one
 * carries the account as MessageGroupId: ours carry it in their body too, and
 * a bus rule's takes it from the event (BUS_MESSAGE_GROUP, the body's
 * `detail.accountId`). fauxqs drops the group id of a standard queue's
 * message, so the body stands in (a message without one is its own group, as in SQS).
 */
export function groupOf(m: Message): string {
  try {
    const body = JSON.parse(m.Body ?? '') as { accountId?: unknown; detail?: { accountId?: unknown } };
    const accountId = body.accountId ?? body.detail?.accountId;
    if (typeof accountId === 'string' && accountId) return accountId;
  } catch {
    // not JSON: its own group
  }
  return `message:${m.MessageId}`;
}

/**
 * The next batch of a fair queue, as SQS fair queues hand them out: one
 * message at a time from the group with the fewest messages in flight (the
 * longest waiting among equals), so a group with a backlog never holds up the
 * others. Takes the messages out of `lanes` and counts them in `inFlight`.
 */
export function takeFairBatch(lanes: Map<string, Buffered[]>, inFlight: Map<string, number>, size: number): Buffered[] {
  const batch: Buffered[] = [];
  while (batch.length < size) {
    let best: string | undefined;
    for (const [group, lane] of lanes) {
      if (best === undefined) {
        best = group;
        continue;
      }
      const [mine, theirs] = [inFlight.get(group) ?? 0, inFlight.get(best) ?? 0];
      if (mine < theirs || (mine === theirs && lane[0].hiddenAt < lanes.get(best)![0].hiddenAt)) best = group;
    }
    if (best === undefined) break;
    const lane = lanes.get(best)!;
    batch.push(lane.shift()!);
    if (!lane.length) lanes.delete(best);
    inFlight.set(best, (inFlight.get(best) ?? 0) + 1);
  }
  return batch;
}

/** Messages a fair queue's poller holds received at most (far below what its visibility timeout lets it work off). */
const FAIR_BUFFER = 2_000;

/**
 * The local stand-in for Lambda's poller of an SQS fair queue (every queue of
 * the topology is one). fauxqs hands messages out first in, first out, so one account's
 * backlog would delay every other account's messages; this poller receives
 * eagerly into per-group lanes and gives its workers the messages of the
 * least busy group first (takeFairBatch), the way SQS serves quiet tenants
 * first. Held messages stay invisible in fauxqs; one held for half its
 * visibility timeout has it renewed, and on stop whatever is still held is
 * made visible again at once.
 */
class FairQueuePoller {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly lanes = new Map<string, Buffered[]>();
  private readonly inFlight = new Map<string, number>();
  private held = 0;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly sqs: SqsCalls,
    private readonly def: PollerQueue,
    private readonly url: string,
    private readonly region: string,
    private readonly handler: SqsHandler,
    /** Batches in flight at once (the mapping's maximum concurrency, as Lambda scales out). */
    private readonly concurrency: number,
    /** WaitTimeSeconds of the long poll of an idle queue: its cost (a receive per queue per this many seconds) against how long stop waits for it. */
    private readonly idleWaitSeconds = 1,
  ) {}

  start() {
    this.running = true;
    this.loops.push(this.receive());
    for (let i = 0; i < this.concurrency; i++) this.loops.push(this.work());
  }

  async stop() {
    this.running = false;
    this.signal();
    await Promise.all(this.loops);
    const rest = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.held = 0;
    // RELEASE_SECONDS, not 0: on persisted queues fauxqs would drop them from memory (local/sqs-state.ts).
    await this.setVisibility(rest, RELEASE_SECONDS).catch((err) => log(`${this.def.name}: could not release held messages`, { err: (err as Error).message }));
  }

  private signal() {
    const waiting = this.waiters;
    this.waiters = [];
    waiting.forEach((wake) => wake());
  }

  private async setVisibility(items: Buffered[], seconds: number) {
    for (let i = 0; i < items.length; i += 10) {
      const chunk = items.slice(i, i + 10);
      await this.sqs.send(
        new ChangeMessageVisibilityBatchCommand({ QueueUrl: this.url, Entries: chunk.map((b, j) => ({ Id: String(j), ReceiptHandle: b.message.ReceiptHandle!, VisibilityTimeout: seconds })) }),
      );
    }
  }

  /** Receive everything available into the lanes (bounded), keeping held messages invisible. */
  private async receive() {
    let checked = Date.now();
    while (this.running) {
      try {
        if (Date.now() - checked > 1000) {
          checked = Date.now();
          const stale = [...this.lanes.values()].flat().filter((b) => checked - b.hiddenAt > (this.def.visibilityTimeoutSeconds * 1000) / 2);
          if (stale.length) await this.setVisibility(stale, this.def.visibilityTimeoutSeconds);
          stale.forEach((b) => (b.hiddenAt = checked));
        }
        if (this.held >= FAIR_BUFFER) {
          await sleep(20);
          continue;
        }
        // A long poll answers as soon as a message arrives; the workers never wait on this loop.
        const out = await this.sqs.send(
          new ReceiveMessageCommand({ QueueUrl: this.url, MaxNumberOfMessages: 10, WaitTimeSeconds: this.idleWaitSeconds, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }),
        );
        const messages = out.Messages ?? [];
        for (const message of messages) {
          const group = groupOf(message);
          const lane = this.lanes.get(group) ?? [];
          lane.push({ message, group, hiddenAt: Date.now() });
          this.lanes.set(group, lane);
        }
        this.held += messages.length;
        if (messages.length) this.signal();
      } catch (err) {
        if (!this.running) return;
        log(`${this.def.name}: poll failed`, { err: (err as Error).message });
        await sleep(500);
      }
    }
  }

  private async work() {
    const arn = queueArn(this.region, this.def.name);
    while (this.running) {
      // Spread what is held over the idle workers (as a queue hands arriving messages to waiting pollers)
      // rather than giving one worker a full batch while the others wait.
      const share = Math.ceil(this.held / (this.waiters.length + 1));
      const batch = takeFairBatch(this.lanes, this.inFlight, Math.min(10, this.def.batchSize, Math.max(1, share)));
      if (!batch.length) {
        // Woken by a receive or by a batch finishing (its group may have more); the timer is only a safety net.
        await new Promise<void>((wake) => {
          this.waiters.push(wake);
          setTimeout(wake, 1000).unref();
        });
        continue;
      }
      this.held -= batch.length;
      try {
        await consumeBatch(
          this.sqs,
          this.def,
          this.url,
          arn,
          this.region,
          this.handler,
          batch.map((b) => b.message),
        );
      } catch (err) {
        log(`${this.def.name}: delete failed`, { err: (err as Error).message });
      } finally {
        for (const b of batch) {
          const n = (this.inFlight.get(b.group) ?? 1) - 1;
          if (n) this.inFlight.set(b.group, n);
          else this.inFlight.delete(b.group);
        }
        // The group's next messages may go to a waiting worker now.
        if (this.held) this.signal();
      }
    }
  }
}

export interface PipelineOptions {
  /** The deployed functions (local/lambda/): the pollers invoke them as their event-source mappings would. */
  lambda: LocalLambda;
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  tableName: string;
  region?: string;
  /** Stream poll interval when the stream is idle (ms): a webhook gets its delivery within about a second of the ticket change. */
  pollIntervalMs?: number;
  /**
   * WaitTimeSeconds of an idle queue's long poll (default 1). Each idle queue costs one receive per this many seconds
   * (and fauxqs runs a 20 ms timer per queue while a receive waits); stop waits up to this long for the pending ones.
   * `npm start` uses 5.
   */
  idleWaitSeconds?: number;
  /** The longest pause between reads of an idle stream (default IDLE_STREAM_MAX_MS, 500 ms); `npm start` uses 1000. */
  idleStreamMaxMs?: number;
  /** How often the outbox sweeper runs (ms; default: its schedule in the template). */
  sweepIntervalMs?: number;
  /** Which queues to consume (default: every queue with an event-source mapping in the template). */
  queues?: readonly QueueName[];
  /** Concurrent batches per queue (default: the mapping's maximum concurrency, as Lambda would scale to, capped at 8 locally). */
  concurrency?: number;
  /**
   * Publish only these accounts' outbox items (stream and sweeper). Tests share
   * one table across files, and other files assert on their own outbox items.
   */
  accounts?: ReadonlySet<string>;
  /** Sweep the whole outbox at start (default true: what a previous run left behind goes out). */
  sweepOnStart?: boolean;
  /** Run the template's scheduled jobs on their timers (default true; tests turn them off and call runSchedule). The sweeper always runs. */
  schedules?: boolean;
}

export interface Pipeline {
  /** Stop / start the stream -> publisher path only (crash tests: events stay in the outbox meanwhile). */
  stopPublisher(): Promise<void>;
  startPublisher(): Promise<void>;
  /** Run the outbox sweeper function now. */
  sweep(olderThanSeconds?: number): Promise<{ published: number; parked: number; unpublished: number }>;
  /** Run one scheduled job of the topology now, with the event its schedule would pass (tests). */
  runSchedule(name: string, event?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** The scheduled event EventBridge passes to a function on a schedule rule. */
const scheduledEvent = (ruleArn: string) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': 'Scheduled Event',
  source: 'aws.events',
  account: LOCAL_ACCOUNT,
  time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
  region: 'us-east-1',
  resources: [ruleArn],
  detail: {},
});

/**
 * Start the pipeline: one poller per event-source mapping of the template
 * (the table stream for the outbox publisher, each queue for its consumer),
 * invoking the deployed functions with Lambda's event shapes, batch sizes,
 * filters and partial-failure reports, and timers for the schedule rules.
 */
export async function startPipeline(opts: PipelineOptions): Promise<Pipeline> {
  const region = opts.region ?? 'us-east-1';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const ddb = new DynamoDBClient({ region, endpoint: opts.dynamodbEndpoint, credentials });
  const streams = new DynamoDBStreamsClient({ region, endpoint: opts.dynamodbEndpoint, credentials });
  const sqs = sqsCalls(opts.sqsEndpoint, region);
  const { lambda } = opts;
  const d = lambda.deployment;
  const accounts = opts.accounts;

  const [mapping] = d.streamMappings;
  if (!mapping || d.streamMappings.length !== 1) throw new Error('The template should have one stream mapping (the outbox publisher)');
  const publisher = lambda.fn(mapping.functionId);
  // The mapping's event filter, as Lambda applies it; tests add their own accounts on top.
  const streamFilter = (r: DynamoDBRecord) =>
    (mapping.filters.length === 0 || mapping.filters.some((f) => matchesPattern(f, r))) && (!accounts || accounts.has(String(r.dynamodb?.NewImage?.accountId?.S ?? '')));
  const stream = new StreamPoller(
    ddb,
    streams,
    opts.tableName,
    region,
    (event) => publisher.invoke<DynamoDBBatchResponse | undefined>(event),
    opts.pollIntervalMs ?? 100,
    mapping.batchSize,
    streamFilter,
    mapping.parallelizationFactor,
    opts.idleStreamMaxMs,
  );
  await stream.start();

  const pollers: FairQueuePoller[] = [];
  for (const m of d.sqsMappings) {
    const queue = d.queues.get(m.queueId)!;
    if (opts.queues && !opts.queues.includes(queue.name as QueueName)) continue;
    const fn = lambda.fn(m.functionId);
    const handler: SqsHandler = (event) => fn.invoke<SQSBatchResponse | undefined>(event);
    const shape: PollerQueue = { name: queue.name, batchSize: m.batchSize, visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds ?? 30 };
    // fauxqs ignores MessageGroupId: the poller serves every queue fairly itself (each is an SQS fair queue in AWS).
    const poller = new FairQueuePoller(sqs, shape, lambda.queueUrl(m.queueId), region, handler, opts.concurrency ?? Math.min(8, m.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY), opts.idleWaitSeconds);
    poller.start();
    pollers.push(poller);
  }

  const sweeperFn = lambda.byEntry(OUTBOX_PUBLISHER.sweeper);
  const sweep = (olderThanSeconds?: number) => sweeperFn.invoke<{ published: number; parked: number; unpublished: number }>({ olderThanSeconds, ...(accounts ? { accountIds: [...accounts] } : {}) });
  // Anything left in the outbox by a previous run (stopped between a write and its publish) goes out now.
  if (opts.sweepOnStart ?? true) await sweep(0);

  // Schedule rules: the sweeper always (it is what makes the outbox safe), the other jobs unless turned off.
  const timers = d.schedules
    .filter((s) => s.functionId === sweeperFn.def.logicalId || (opts.schedules ?? true))
    .map((s) => {
      const fn = lambda.fn(s.functionId);
      const sweeper = fn === sweeperFn;
      const every = sweeper && opts.sweepIntervalMs ? opts.sweepIntervalMs : s.rateSeconds * 1000;
      const run = () => (sweeper ? sweep() : fn.invoke(scheduledEvent(`arn:aws:events:${region}:${LOCAL_ACCOUNT}:rule/${s.logicalId}`)));
      const t = setInterval(() => void run().catch((err) => log(`scheduled ${fn.name} failed`, { err: (err as Error).message })), every);
      t.unref();
      return t;
    });

  // Scheduled jobs by their topology name (tests run them with the event the schedule would pass).
  const runSchedule = async (name: string, event: unknown = scheduledEvent(`arn:aws:events:${region}:${LOCAL_ACCOUNT}:rule/${name}`)) => {
    const def = SCHEDULES.find((s) => s.name === name);
    if (!def) throw new Error(`No scheduled job ${name}`);
    return lambda.byEntry(def.entry).invoke(event);
  };

  return {
    runSchedule,
    stopPublisher: () => stream.stop(),
    startPublisher: () => stream.start(),
    sweep,
    async stop() {
      timers.forEach(clearInterval);
      await stream.stop();
      const stopping = pollers.map((p) => p.stop());
      // In process, the pending long polls end now rather than within their wait (a message they take is handled).
      sqs.wakeReceives();
      await Promise.all(stopping);
      ddb.destroy();
      streams.destroy();
      sqs.destroy();
    },
  };
}
