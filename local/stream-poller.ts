/**
 * The local stand-in for Lambda's event-source mapping of the table's stream
 * (the outbox publisher's): DynamoDB Local's stream read shard by shard, its
 * records handed to the publisher in Lambda's DynamoDBStreamEvent shape.
 */
import {
  DescribeStreamCommand,
  GetRecordsCommand,
  GetShardIteratorCommand,
  ListStreamsCommand,
  type DynamoDBStreamsClient,
  type _Record as StreamRecord,
  type ShardIteratorType,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { warn } from './pipeline-log.ts';
import { StreamLanes } from './stream-lanes.ts';

/** GetRecords' largest Limit. */
const GET_RECORDS_MAX = 1000;

/** The longest pause between reads of an idle stream: the first event after a quiet spell waits at most this long. */
export const IDLE_STREAM_MAX_MS = 500;

export type StreamHandler = (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>;

export interface StreamPollerOptions {
  streams: DynamoDBStreamsClient;
  table: string;
  region: string;
  handler: StreamHandler;
  /** The pause between reads of an idle stream at first (ms); it doubles while the stream stays idle, up to `idleMaxMs`. */
  intervalMs: number;
  idleMaxMs?: number;
  /** The mapping's batch size and ParallelizationFactor. */
  batchSize: number;
  parallel: number;
  /** Like a Lambda event filter: records it rejects never reach the handler. */
  filter: (r: DynamoDBRecord) => boolean;
}

interface Shard {
  iterator?: string;
  lastSeq?: string;
}

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
 * Polls every shard of the table's stream and feeds the handler as a Lambda
 * stream mapping with a ParallelizationFactor does (the template's is 10): the
 * records that pass the filter go to that many lanes by their partition key
 * (StreamLanes), each lane hands its records over in order, one batch at a
 * time, and the lanes run side by side while the shard is read on. An
 * account's items share a partition key, so one account's backlog holds up its
 * own lane only, never a quiet account's events. A failed batch is retried on
 * its own a few times, then left behind as maxRecordAge would (the outbox
 * sweeper covers it). New shards are picked up as DynamoDB rolls them.
 */
export class StreamPoller {
  private readonly shards = new Map<string, Shard>();
  private readonly finished = new Set<string>();
  private running = false;
  private loop?: Promise<void>;
  private streamArn = '';
  private readonly lanes: StreamLanes;
  /** Callers of caughtUp, answered by the first round of reads that began after they asked and found every shard at its end. */
  private catchUps: (() => void)[] = [];
  /** Ends the pause between reads of an idle stream at once. */
  private wake = () => {};
  /** Something may have written since the current round of reads began: read again before pausing. */
  private nudged = false;

  constructor(private readonly o: StreamPollerOptions) {
    this.lanes = new StreamLanes(o.parallel, o.batchSize, (records) => this.invoke({ Records: records }));
  }

  /** One batch: retried a few times like Lambda would, then skipped. */
  private async invoke(event: DynamoDBStreamEvent): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const res = await this.o.handler(event);
        if (!res?.batchItemFailures?.length) return;
      } catch (err) {
        warn('stream poller: handler failed', { attempt, err: (err as Error).message });
      }
      if (attempt >= 3) {
        warn('stream poller: batch skipped after retries; the outbox sweeper publishes what it held', { records: event.Records.length });
        return;
      }
      await sleep(200 * attempt);
    }
  }

  private async iterator(shardId: string, type: ShardIteratorType, seq?: string): Promise<string | undefined> {
    const out = await this.o.streams.send(new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: seq }));
    return out.ShardIterator;
  }

  /** Find shards; those open at start are read from their tip, shards that appear later from their beginning. */
  private async discover(initial: boolean) {
    let start: string | undefined;
    do {
      const out = await this.o.streams.send(new DescribeStreamCommand({ StreamArn: this.streamArn, ExclusiveStartShardId: start }));
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
      // ListStreams, not DescribeTable: DynamoDB Local's DescribeTable counts the table's items on every call (17 ms
      // on an empty table, 170-190 ms at 20,000 items), and the test run starts a pipeline per file on one growing table.
      const { Streams = [] } = await this.o.streams.send(new ListStreamsCommand({ TableName: this.o.table }));
      // A table whose stream was turned off and on again lists both; the label is the stream's creation time.
      const [latest] = [...Streams].sort((a, b) => (b.StreamLabel ?? '').localeCompare(a.StreamLabel ?? ''));
      this.streamArn = latest?.StreamArn ?? '';
      if (!this.streamArn) throw new Error(`Table ${this.o.table} has no stream`);
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
    this.wake();
    await this.loop;
    await this.lanes.idle();
    // Stopped, nothing more is read: those waiting have what there is.
    this.catchUps.splice(0).forEach((done) => done());
  }

  /**
   * Resolves once the stream has been read up to where it stood when called
   * (every shard read to its end by a round of reads that began after the
   * call) and every record read has been handed over and its batch has ended.
   * While stopped nothing is read: only the batches under way are waited for.
   */
  async caughtUp(): Promise<void> {
    if (this.running) {
      await new Promise<void>((resolve) => {
        this.catchUps.push(resolve);
        this.wake();
      });
    }
    await this.lanes.idle();
  }

  /**
   * A write may just have happened (a function answered): read now, and again after the round under way, at the
   * fast pace. An idle stream is then read seldom (idleMaxMs) without the first event after a quiet spell waiting
   * for that poll.
   */
  nudge() {
    this.nudged = true;
    this.wake();
  }

  private pause(ms: number): Promise<void> {
    // Stopped during a read: stop's wake() found no pause to end, so none may begin (with the idle pace at minutes,
    // stop waited it out: a test's pipeline that reads only when nudged hung its after-hook for 60 s).
    if (!this.running) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async run() {
    let rounds = 0;
    // An idle stream is read less and less often (up to idleMaxMs apart); a record resets the pace.
    let idleMs = this.o.intervalMs;
    while (this.running) {
      const asking = this.catchUps.splice(0);
      const nudged = this.nudged;
      this.nudged = false;
      let busy = false;
      let atEnd = false;
      try {
        if (rounds++ % 25 === 0 || asking.length) await this.discover(false);
        // Shards are independent (Lambda runs one mapping per shard), so they are read side by side.
        const read = await Promise.all([...this.shards].map(([id, shard]) => this.pollShard(id, shard)));
        busy = read.some((n) => n > 0);
        atEnd = read.every((n) => n === 0);
      } catch (err) {
        warn('stream poller: error, retrying', { err: (err as Error).message });
      }
      if (atEnd) asking.forEach((done) => done());
      else this.catchUps.unshift(...asking);
      // Under load, or asked to catch up, read on at once: the interval only paces an idle stream.
      if (busy || (atEnd && this.catchUps.length) || this.nudged) {
        idleMs = this.o.intervalMs;
        continue;
      }
      if (nudged) idleMs = this.o.intervalMs;
      await this.pause(idleMs);
      idleMs = Math.min(Math.max(this.o.intervalMs, this.o.idleMaxMs ?? IDLE_STREAM_MAX_MS), idleMs * 2);
    }
  }

  /**
   * Read what a shard has (up to GetRecords' maximum) and hand what passes the filter to the lanes, which batch
   * it as Lambda batches filtered records: most of the table's records are not outbox items, and reading batchSize
   * raw records at a time handed the publisher batches of a few events each (issue 21). Answers how many records
   * the read returned (0: the shard is at its end), or -1 when it could not read.
   */
  private async pollShard(id: string, shard: Shard): Promise<number> {
    if (!shard.iterator) {
      this.shards.delete(id);
      this.finished.add(id);
      return 0;
    }
    let out;
    try {
      out = await this.o.streams.send(new GetRecordsCommand({ ShardIterator: shard.iterator, Limit: GET_RECORDS_MAX }));
    } catch (err) {
      if ((err as Error).name !== 'ExpiredIteratorException') throw err;
      shard.iterator = await this.iterator(id, shard.lastSeq ? 'AFTER_SEQUENCE_NUMBER' : 'LATEST', shard.lastSeq);
      return -1;
    }
    const all = out.Records ?? [];
    const records = all.map((r) => toLambdaRecord(r, this.streamArn, this.o.region)).filter(this.o.filter);
    if (records.length) await this.lanes.add(records);
    if (all.length) shard.lastSeq = all[all.length - 1].dynamodb!.SequenceNumber;
    shard.iterator = out.NextShardIterator;
    return all.length;
  }
}
