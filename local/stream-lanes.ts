import type { DynamoDBRecord } from 'aws-lambda';
import { TABLE_KEYS } from '#shared/db/table-definition.ts';

/** A stable small hash of a record's partition key: its lane under a ParallelizationFactor. */
export function laneOf(r: DynamoDBRecord, lanes: number): number {
  const key = JSON.stringify(r.dynamodb?.Keys?.[TABLE_KEYS.partitionKey] ?? null);
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % lanes;
}

/** Records a stream poller holds read but not yet handed over, at most (then it waits before reading on). */
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
