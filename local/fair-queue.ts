/**
 * An SQS fair queue's order of service, as the local queue poller
 * (local/queue-poller.ts) hands received messages to its workers: by message
 * group, the least busy group first.
 */
import type { Message } from '@aws-sdk/client-sqs';

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
