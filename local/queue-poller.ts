/**
 * The local stand-in for Lambda's event-source mapping of an SQS queue: a
 * poller of the fauxqs queue that invokes its consumer with Lambda's SQSEvent
 * shape, serving the queue as an SQS fair queue (local/fair-queue.ts).
 */
import { ChangeMessageVisibilityBatchCommand, DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, type Message, type QueueAttributeName } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { groupOf, takeFairBatch, type Buffered } from './fair-queue.ts';
import { LOCAL_ACCOUNT } from './lambda/index.ts';
import { warn } from './pipeline-log.ts';
import type { SqsCalls } from './sqs-calls.ts';
import { RELEASE_SECONDS } from './sqs-state.ts';

export type SqsHandler = (event: SQSEvent) => Promise<SQSBatchResponse | undefined>;

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

/** Messages a poller holds received at most (far below what its visibility timeout lets it work off). */
const FAIR_BUFFER = 2_000;

/**
 * The local stand-in for Lambda's poller of an SQS fair queue (every queue of
 * the topology is one). fauxqs hands messages out first in, first out, so one account's
 * backlog would delay every other account's messages; this poller receives
 * eagerly into per-group lanes and gives its workers the messages of the
 * least busy group first (takeFairBatch), the way SQS serves quiet tenants
 * first. A batch is handed to the consumer as Lambda does: what it does not
 * report failed is deleted. Held messages stay invisible in fauxqs; one held
 * for half its visibility timeout has it renewed, and on stop whatever is
 * still held is made visible again at once.
 */
export class FairQueuePoller {
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly lanes = new Map<string, Buffered[]>();
  private readonly inFlight = new Map<string, number>();
  private held = 0;
  /** Batches being handled. */
  private working = 0;
  /** Receives started and ended, and the messages they took: what drained() reads the queue's counts against. */
  private receivesStarted = 0;
  private receivesEnded = 0;
  private received = 0;
  private waiters: (() => void)[] = [];
  private watchers: (() => void)[] = [];

  constructor(
    private readonly sqs: SqsCalls,
    private readonly def: PollerQueue,
    private readonly url: string,
    private readonly arn: string,
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
    this.notify();
    await Promise.all(this.loops);
    const rest = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.held = 0;
    // RELEASE_SECONDS, not 0: on persisted queues fauxqs would drop them from memory (local/sqs-state.ts).
    await this.setVisibility(rest, RELEASE_SECONDS).catch((err) => warn(`${this.def.name}: could not release held messages`, { err: (err as Error).message }));
  }

  /**
   * Resolves once the queue is drained: no message visible, none held or
   * being handled here. A message its consumer hid until a later retry, or one
   * sent with a delay, is waited for (until it has come back and been handled)
   * only with `delayed`; without it, such a message does not keep the queue
   * from counting as drained.
   */
  async drained(delayed = false): Promise<void> {
    while (this.running) {
      if (this.held || this.working) {
        await this.changed();
        continue;
      }
      const [receiving, received] = [this.receivesStarted, this.received];
      const { visible, hidden, later } = await this.counts();
      if (visible) {
        // A receive takes them (fauxqs wakes the waiting one).
        await this.changed();
        continue;
      }
      // A hidden message may be one the receive under way has taken, not yet held here: wait for that receive.
      if (hidden) await this.receiveEnded(receiving);
      if (this.received !== received || this.held || this.working) continue;
      if (!delayed || hidden + later === 0) return;
      // Hidden until a retry, or delayed: each receive that ends looks again.
      await this.changed();
    }
  }

  /** Workers waiting for messages: one wait per idle worker, however long the queue stays idle. */
  get waitingWorkers(): number {
    return this.waiters.length;
  }

  /** Wake the workers waiting for messages. */
  private signal() {
    this.waiters.splice(0).forEach((wake) => wake());
  }

  /**
   * A worker's wait for work: woken by a receive or by a batch finishing (its group may have more); the timer is only
   * a safety net. A wait the timer ends takes itself off the list: an idle queue's workers wake every second, and the
   * list is emptied only when messages come, so their stale wakes piled up (8 a second per queue: the heap of an idle
   * `npm start` grew 1.2 MB a minute).
   */
  private nextSignal(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        const i = this.waiters.indexOf(wake);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve();
      };
      const timer = setTimeout(wake, 1000).unref();
      this.waiters.push(wake);
    });
  }

  /** Tell drained() that what it waits on may have changed. */
  private notify() {
    this.watchers.splice(0).forEach((wake) => wake());
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.watchers.push(resolve));
  }

  /** Wait for receive number `n` to end; in process, a long poll that is waiting ends now. */
  private async receiveEnded(n: number) {
    while (this.running && this.receivesEnded < n) {
      const ended = this.changed();
      this.sqs.wakeReceives();
      await ended;
    }
  }

  private async counts() {
    const out = await this.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: this.url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
    );
    const count = (name: QueueAttributeName) => Number(out.Attributes?.[name] ?? 0);
    return { visible: count('ApproximateNumberOfMessages'), hidden: count('ApproximateNumberOfMessagesNotVisible'), later: count('ApproximateNumberOfMessagesDelayed') };
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
        this.receivesStarted++;
        let messages: Message[] = [];
        try {
          const out = await this.sqs.send(
            new ReceiveMessageCommand({ QueueUrl: this.url, MaxNumberOfMessages: 10, WaitTimeSeconds: this.idleWaitSeconds, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All'] }),
          );
          messages = out.Messages ?? [];
        } finally {
          for (const message of messages) {
            const group = groupOf(message);
            const lane = this.lanes.get(group) ?? [];
            lane.push({ message, group, hiddenAt: Date.now() });
            this.lanes.set(group, lane);
          }
          this.held += messages.length;
          this.received += messages.length;
          this.receivesEnded++;
          if (messages.length) this.signal();
          this.notify();
        }
      } catch (err) {
        if (!this.running) return;
        warn(`${this.def.name}: poll failed`, { err: (err as Error).message });
        await sleep(500);
      }
    }
  }

  private async work() {
    while (this.running) {
      // Spread what is held over the idle workers (as a queue hands arriving messages to waiting pollers)
      // rather than giving one worker a full batch while the others wait.
      const share = Math.ceil(this.held / (this.waiters.length + 1));
      const batch = takeFairBatch(this.lanes, this.inFlight, Math.min(10, this.def.batchSize, Math.max(1, share)));
      if (!batch.length) {
        await this.nextSignal();
        continue;
      }
      this.held -= batch.length;
      this.working++;
      try {
        await this.consume(batch.map((b) => b.message));
      } catch (err) {
        warn(`${this.def.name}: delete failed`, { err: (err as Error).message });
      } finally {
        for (const b of batch) {
          const n = (this.inFlight.get(b.group) ?? 1) - 1;
          if (n) this.inFlight.set(b.group, n);
          else this.inFlight.delete(b.group);
        }
        this.working--;
        // The group's next messages may go to a waiting worker now.
        if (this.held) this.signal();
        this.notify();
      }
    }
  }

  /** Invoke the consumer with received messages, as Lambda does: what it does not report failed is deleted. */
  private async consume(messages: Message[]): Promise<void> {
    let failed: Set<string>;
    try {
      const res = await this.handler({ Records: messages.map((m) => toSqsRecord(m, this.arn, this.region)) });
      failed = new Set((res?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
    } catch (err) {
      warn(`${this.def.name}: consumer threw; the whole batch returns to the queue`, { err: (err as Error).message });
      failed = new Set(messages.map((m) => m.MessageId!));
    }
    const done = messages.filter((m) => !failed.has(m.MessageId!));
    if (done.length) await this.sqs.send(new DeleteMessageBatchCommand({ QueueUrl: this.url, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
  }
}
