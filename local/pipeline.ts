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
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { startFauxqs } from 'fauxqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_MAX_CONCURRENCY, dlqName, MESSAGE_RETENTION_SECONDS, QUEUES, SCHEDULES, type QueueDef, type QueueName } from '#shared/events/topology.ts';

/** fauxqs's account id: queue URLs are `<endpoint>/000000000000/<name>`. */
const ACCOUNT = '000000000000';
export const localQueueUrl = (sqsEndpoint: string, name: string) => `${sqsEndpoint}/${ACCOUNT}/${name}`;
const queueArn = (region: string, name: string) => `arn:aws:sqs:${region}:${ACCOUNT}:${name}`;

const log = (message: string, data?: Record<string, unknown>) => {
  if (process.env.LOG_LEVEL !== 'silent') console.log(JSON.stringify({ level: 'WARN', message, ...data }));
};

export interface LocalSqs {
  endpoint: string;
  stop(): Promise<void>;
}

/** Start fauxqs in-process and create every queue of the topology, each with its DLQ and redrive policy. */
export async function startLocalSqs(port: number, region = 'us-east-1'): Promise<LocalSqs> {
  const server = await startFauxqs({ port, logger: false });
  for (const q of QUEUES) {
    server.createQueue(dlqName(q.name), { attributes: { MessageRetentionPeriod: String(MESSAGE_RETENTION_SECONDS) } });
    server.createQueue(q.name, {
      attributes: {
        VisibilityTimeout: String(q.visibilityTimeoutSeconds),
        MessageRetentionPeriod: String(MESSAGE_RETENTION_SECONDS),
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: queueArn(region, dlqName(q.name)), maxReceiveCount: String(q.maxReceiveCount) }),
      },
    });
  }
  return { endpoint: server.address, stop: () => server.stop() };
}

/** The environment the pipeline's handlers read (set before any of them is imported). */
export function pipelineEnvVars(sqsEndpoint: string): Record<string, string> {
  const vars: Record<string, string> = { SQS_ENDPOINT: sqsEndpoint, EVENT_BUS_NAME: 'local' };
  for (const q of QUEUES) {
    if (q.urlEnv) vars[q.urlEnv] = localQueueUrl(sqsEndpoint, q.name);
    if (q.dlqUrlEnv) vars[q.dlqUrlEnv] = localQueueUrl(sqsEndpoint, dlqName(q.name));
  }
  return vars;
}

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

/**
 * Polls every shard of the table's stream and feeds the handler, like a
 * Lambda stream mapping. With `parallel` 1 it is strictly in order, one shard
 * batch at a time, and a reported failure (or a throw) re-reads the shard from
 * the failed record (ReportBatchItemFailures). With `parallel` N (the
 * mapping's ParallelizationFactor) up to N batches of a shard are handled at
 * once while the next is read, and a failed batch is retried on its own a few
 * times, then left behind as maxRecordAge would (the outbox sweeper covers it):
 * a slow handler no longer makes every later record wait for it. New shards
 * are picked up as DynamoDB rolls them.
 */
class StreamPoller {
  private shards = new Map<string, { iterator?: string; lastSeq?: string }>();
  private finished = new Set<string>();
  private running = false;
  private loop?: Promise<void>;
  private streamArn = '';
  private readonly inFlight = new Set<Promise<void>>();

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
  ) {}

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
    await Promise.all(this.inFlight);
  }

  private async run() {
    let rounds = 0;
    while (this.running) {
      try {
        if (rounds++ % 25 === 0) await this.discover(false);
        let busy = false;
        // Shards are independent (Lambda runs one mapping per shard), so they are read side by side.
        await Promise.all([...this.shards].map(async ([id, shard]) => (busy = (await this.pollShard(id, shard)) || busy)));
        // Under load, read on at once: the interval only paces an idle stream.
        if (busy) continue;
      } catch (err) {
        log('stream poller: error, retrying', { err: (err as Error).message });
      }
      await sleep(this.intervalMs);
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
      out = await this.streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: this.batchSize }));
    } catch (err) {
      if ((err as Error).name !== 'ExpiredIteratorException') throw err;
      shard.iterator = await this.iterator(id, shard.lastSeq ? 'AFTER_SEQUENCE_NUMBER' : 'LATEST', shard.lastSeq);
      return false;
    }
    const all = out.Records ?? [];
    const records = all.filter((r) => this.filter(toLambdaRecord(r, this.streamArn, this.region)));
    if (records.length && this.parallel > 1) {
      const run = this.invoke({ Records: records.map((r) => toLambdaRecord(r, this.streamArn, this.region)) });
      this.inFlight.add(run);
      void run.finally(() => this.inFlight.delete(run));
      while (this.inFlight.size >= this.parallel) await Promise.race(this.inFlight);
    } else if (records.length) {
      let failedSeq: string | undefined;
      try {
        const res = await this.handler({ Records: records.map((r) => toLambdaRecord(r, this.streamArn, this.region)) });
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

function toSqsRecord(m: Message, arn: string, region: string): SQSRecord {
  const a = m.Attributes ?? {};
  return {
    messageId: m.MessageId!,
    receiptHandle: m.ReceiptHandle!,
    body: m.Body ?? '',
    attributes: {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? ACCOUNT,
      ApproximateFirstReceiveTimestamp: a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: m.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: arn,
    awsRegion: region,
  };
}

/**
 * Long-polls one queue and invokes its consumer with batches of up to the
 * topology's batch size, several batches in flight at once (Lambda scales
 * out the same way). Messages not reported failed are deleted.
 */
class QueuePoller {
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly sqs: SQSClient,
    private readonly def: QueueDef,
    private readonly url: string,
    private readonly region: string,
    private readonly handler: SqsHandler,
    private readonly concurrency: number,
  ) {}

  start() {
    this.running = true;
    for (let i = 0; i < this.concurrency; i++) this.loops.push(this.run());
  }

  async stop() {
    this.running = false;
    // No abort of the pending long polls: fauxqs would still hand a message to an abandoned receive, hiding it
    // for the whole visibility timeout (a restart then seemed to lose events). They end within WaitTimeSeconds
    // and whatever they bring is handled.
    await Promise.all(this.loops);
  }

  private async run() {
    const arn = queueArn(this.region, this.def.name);
    while (this.running) {
      try {
        const out = await this.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: this.url,
            MaxNumberOfMessages: Math.min(10, this.def.batchSize),
            WaitTimeSeconds: 1,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        const messages = out.Messages ?? [];
        if (!messages.length) continue;
        let failed: Set<string>;
        try {
          const res = await this.handler({ Records: messages.map((m) => toSqsRecord(m, arn, this.region)) });
          failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
        } catch (err) {
          log(`${this.def.name}: consumer threw; the whole batch returns to the queue`, { err: (err as Error).message });
          failed = new Set(messages.map((m) => m.MessageId!));
        }
        const done = messages.filter((m) => !failed.has(m.MessageId!));
        if (done.length) await this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: this.url, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
      } catch (err) {
        if (!this.running) return;
        log(`${this.def.name}: poll failed`, { err: (err as Error).message });
        await sleep(500);
      }
    }
  }
}

export interface PipelineOptions {
  dynamodbEndpoint: string;
  sqsEndpoint: string;
  tableName: string;
  region?: string;
  /** Stream poll interval (ms): a webhook gets its delivery within about a second of the ticket change. */
  pollIntervalMs?: number;
  /** How often the outbox sweeper runs (ms). */
  sweepIntervalMs?: number;
  /** Which queues to consume (default: every queue of the topology). */
  queues?: readonly QueueName[];
  /** Concurrent batches per queue (default: the queue's maxConcurrency, as Lambda would scale to, capped at 8 locally). */
  concurrency?: number;
  /**
   * Publish only these accounts' outbox items (stream and sweeper). Tests share
   * one table across files, and other files assert on their own outbox items.
   */
  accounts?: (accountId: string) => boolean;
  /** Sweep the whole outbox at start (default true: what a previous run left behind goes out). */
  sweepOnStart?: boolean;
  /** Run the topology's scheduled jobs on their timers (default true; tests turn them off and call runSchedule). */
  schedules?: boolean;
}

export interface Pipeline {
  /** Stop / start the stream -> publisher path only (crash tests: events stay in the outbox meanwhile). */
  stopPublisher(): Promise<void>;
  startPublisher(): Promise<void>;
  /** Run the outbox sweeper now. */
  sweep(olderThanSeconds?: number): Promise<{ published: number; parked: number; unpublished: number }>;
  /** Run one scheduled job of the topology now, with the event its schedule would pass (tests). */
  runSchedule(name: string, event?: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/**
 * Start the pipeline in this process. The environment must already point at
 * the emulators (configureLocalEnv): the handlers read it when imported here.
 */
export async function startPipeline(opts: PipelineOptions): Promise<Pipeline> {
  const region = opts.region ?? process.env.AWS_REGION ?? 'us-east-1';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const ddb = new DynamoDBClient({ region, endpoint: opts.dynamodbEndpoint, credentials });
  const streams = new DynamoDBStreamsClient({ region, endpoint: opts.dynamodbEndpoint, credentials });
  const sqs = new SQSClient({ region, endpoint: opts.sqsEndpoint, credentials });

  const { OUTBOX_PUBLISHER } = await import('#shared/events/topology.ts');
  (await import('#shared/events/bus.ts')).installLocalBus(async () => (await import('./bus.ts')).localBus());
  const publisher = await import('#functions/outbox-publisher/handler.ts');
  const { configuredBus } = await import('#shared/events/bus.ts');
  const { sweepOutbox } = await import('#shared/events/publisher.ts');
  const { pipelineEnv } = await import('#shared/events/env.ts');
  const bus = await configuredBus();

  const accounts = opts.accounts;
  const streamFilter = accounts ? (r: DynamoDBRecord) => accounts(String(r.dynamodb?.NewImage?.accountId?.S ?? '')) : undefined;
  const stream = new StreamPoller(
    ddb,
    streams,
    opts.tableName,
    region,
    publisher.handler,
    opts.pollIntervalMs ?? 100,
    OUTBOX_PUBLISHER.batchSize,
    streamFilter,
    OUTBOX_PUBLISHER.parallelizationFactor,
  );
  await stream.start();

  const pollers: QueuePoller[] = [];
  for (const def of QUEUES.filter((q) => !opts.queues || opts.queues.includes(q.name))) {
    let handler: SqsHandler;
    try {
      handler = (await def.load()).handler;
    } catch (err) {
      // A consumer whose own settings are missing (e.g. EMAIL_TRANSPORT) is left out rather than stopping the stack.
      log(`local pipeline: ${def.name} consumer not started`, { err: (err as Error).message });
      continue;
    }
    const poller = new QueuePoller(sqs, def, localQueueUrl(opts.sqsEndpoint, def.name), region, handler, opts.concurrency ?? Math.min(8, def.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY));
    poller.start();
    pollers.push(poller);
  }

  const sweep = (olderThanSeconds = pipelineEnv().OUTBOX_SWEEP_AGE_SECONDS) => sweepOutbox(bus, { olderThanSeconds, filter: accounts && ((r) => accounts(r.accountId)) });
  // Anything left in the outbox by a previous run (stopped between a write and its publish) goes out now.
  if (opts.sweepOnStart ?? true) await sweep(0);
  const sweeper = setInterval(() => void sweep().catch((err) => log('outbox sweep failed', { err: (err as Error).message })), opts.sweepIntervalMs ?? 30_000);
  sweeper.unref();

  // Scheduled jobs, as the schedule rules of the CDK app would invoke them.
  const runSchedule = async (name: string, event: unknown = { source: 'aws.events', 'detail-type': 'Scheduled Event', time: new Date().toISOString() }) => {
    const def = SCHEDULES.find((s) => s.name === name);
    if (!def) throw new Error(`No scheduled job ${name}`);
    return (await def.load()).handler(event, {});
  };
  const timers =
    (opts.schedules ?? true)
      ? SCHEDULES.map((s) => {
          const t = setInterval(() => void runSchedule(s.name).catch((err) => log(`scheduled job ${s.name} failed`, { err: (err as Error).message })), s.rateMinutes * 60_000);
          t.unref();
          return t;
        })
      : [];

  return {
    runSchedule,
    stopPublisher: () => stream.stop(),
    startPublisher: () => stream.start(),
    sweep,
    async stop() {
      clearInterval(sweeper);
      timers.forEach(clearInterval);
      await stream.stop();
      await Promise.all(pollers.map((p) => p.stop()));
      ddb.destroy();
      streams.destroy();
      sqs.destroy();
    },
  };
}
