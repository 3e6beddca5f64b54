/**
 * The event pipeline on the local stack, with the same handlers Lambda runs:
 *
 *   table stream (DynamoDB Local) -> outbox publisher -> local bus (topology rules)
 *     -> fauxqs queues -> SQS consumers (webhook fan-out, webhook delivery, email, enrichment)
 *
 * Pollers stand in for Lambda's event-source mappings (local/stream-poller.ts,
 * local/queue-poller.ts): they build the same DynamoDBStreamEvent / SQSEvent
 * shapes, respect batch sizes and filters, and honour `batchItemFailures` the
 * way Lambda does (failed SQS messages stay in the queue); timers stand in for
 * the schedule rules (local/schedules.ts).
 */
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, SQSBatchResponse } from 'aws-lambda';
import { DEFAULT_MAX_CONCURRENCY, OUTBOX_PUBLISHER, type QueueName } from '#app/topology.ts';
import { Invocations } from './invocations.ts';
import { LOCAL_ACCOUNT, type LocalLambda } from './lambda/index.ts';
import { matchesPattern } from './lambda/patterns.ts';
import { warn } from './pipeline-log.ts';
import type { LocalFunction } from './lambda/runtime.ts';
import { FairQueuePoller } from './queue-poller.ts';
import { startSchedules } from './schedules.ts';
import { sqsCalls } from './sqs-calls.ts';
import { StreamPoller } from './stream-poller.ts';
import { withoutSdkLogger } from '#shared/sdk-client.ts';

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
  /** The longest pause between reads of an idle stream (default 500 ms); `npm start` uses 1000. */
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
  /**
   * Resolves once the pipeline has nothing left to do: the stream has been read
   * up to where the table stood and its records handed over, every queue it
   * polls is empty (nothing visible, held or being handled), and none of its
   * invocations runs, with no new one started meanwhile (what a consumer wrote
   * or sent was handled too). A message hidden until a later retry or sent with
   * a delay is waited for only with `delayed`. While the publisher is stopped
   * the stream is not read. Tests assert "nothing happened" after it.
   */
  drained(opts?: { delayed?: boolean }): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Start the pipeline: one poller per event-source mapping of the template
 * (the table stream for the outbox publisher, each queue for its consumer),
 * invoking the deployed functions with Lambda's event shapes, batch sizes,
 * filters and partial-failure reports, and timers for the schedule rules.
 */
export async function startPipeline(opts: PipelineOptions): Promise<Pipeline> {
  const region = opts.region ?? 'us-east-1';
  const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
  const streams = withoutSdkLogger(new DynamoDBStreamsClient({ region, endpoint: opts.dynamodbEndpoint, credentials }));
  const sqs = sqsCalls(opts.sqsEndpoint, region);
  const { lambda, accounts } = opts;
  const d = lambda.deployment;
  const invocations = new Invocations();
  const invoke = <T>(fn: LocalFunction, event: unknown) => invocations.run(() => fn.invoke<T>(event));

  const [mapping] = d.streamMappings;
  if (!mapping || d.streamMappings.length !== 1) throw new Error('The template should have one stream mapping (the outbox publisher)');
  const publisher = lambda.fn(mapping.functionId);
  const stream = new StreamPoller({
    streams,
    table: opts.tableName,
    region,
    handler: (event) => invoke<DynamoDBBatchResponse | undefined>(publisher, event),
    intervalMs: opts.pollIntervalMs ?? 100,
    idleMaxMs: opts.idleStreamMaxMs,
    batchSize: mapping.batchSize,
    parallel: mapping.parallelizationFactor,
    // The mapping's event filter, as Lambda applies it; tests add their own accounts on top.
    filter: (r: DynamoDBRecord) => (mapping.filters.length === 0 || mapping.filters.some((f) => matchesPattern(f, r))) && (!accounts || accounts.has(String(r.dynamodb?.NewImage?.accountId?.S ?? ''))),
  });
  await stream.start();
  // The functions' writes are what the stream carries: each committed write starts a read (StreamPoller.nudge).
  const stopNudging = lambda.afterWrites(() => stream.nudge());

  const pollers: FairQueuePoller[] = [];
  for (const m of d.sqsMappings) {
    const queue = d.queues.get(m.queueId)!;
    if (opts.queues && !opts.queues.includes(queue.name as QueueName)) continue;
    const fn = lambda.fn(m.functionId);
    const shape = { name: queue.name, batchSize: m.batchSize, visibilityTimeoutSeconds: queue.visibilityTimeoutSeconds ?? 30 };
    const arn = `arn:aws:sqs:${region}:${LOCAL_ACCOUNT}:${queue.name}`;
    const concurrency = opts.concurrency ?? Math.min(8, m.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY);
    // fauxqs ignores MessageGroupId: the poller serves every queue fairly itself (each is an SQS fair queue in AWS).
    const poller = new FairQueuePoller(sqs, shape, lambda.queueUrl(m.queueId), arn, region, (event) => invoke<SQSBatchResponse | undefined>(fn, event), concurrency, opts.idleWaitSeconds);
    poller.start();
    pollers.push(poller);
  }

  const sweeperFn = lambda.byEntry(OUTBOX_PUBLISHER.sweeper);
  const sweep = (olderThanSeconds?: number) => invoke<{ published: number; parked: number; unpublished: number }>(sweeperFn, { olderThanSeconds, ...(accounts ? { accountIds: [...accounts] } : {}) });
  // Anything left in the outbox by a previous run (stopped between a write and its publish) goes out now. A sweep that
  // fails (a store in trouble, or FAULTS) is what a failed scheduled run is in AWS: logged, and the schedule goes on.
  if (opts.sweepOnStart ?? true) await sweep(0).catch((err) => warn('the start sweep failed; the schedule sweeps again', { err: (err as Error).message }));
  const schedules = startSchedules({ lambda, region, invoke, sweep, sweepIntervalMs: opts.sweepIntervalMs, all: opts.schedules ?? true });

  let stopped = false;
  return {
    runSchedule: schedules.runSchedule,
    stopPublisher: () => stream.stop(),
    startPublisher: () => stream.start(),
    sweep,
    async drained({ delayed = false } = {}) {
      while (!stopped) {
        await invocations.idle();
        // Everything started so far has ended; a pass that starts nothing new finds the pipeline drained.
        if (invocations.busy) continue;
        const started = invocations.started;
        await stream.caughtUp();
        await Promise.all(pollers.map((p) => p.drained(delayed)));
        await invocations.idle();
        if (invocations.started === started) return;
      }
    },
    async stop() {
      stopped = true;
      schedules.stop();
      stopNudging();
      await stream.stop();
      const stopping = pollers.map((p) => p.stop());
      // In process, the pending long polls end now rather than within their wait (a message they take is handled).
      sqs.wakeReceives();
      await Promise.all(stopping);
      streams.destroy();
      sqs.destroy();
    },
  };
}
