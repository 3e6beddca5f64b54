import type { Message } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { groupOf, takeFairBatch, type Buffered } from '../../local/fair-queue.ts';

const msg = (id: string, body: unknown): Message => ({ MessageId: id, ReceiptHandle: `rh-${id}`, Body: typeof body === 'string' ? body : JSON.stringify(body) });

/** Lanes as the fair poller keeps them: per group, in the order received. */
function lanesOf(items: [group: string, id: string][]) {
  const lanes = new Map<string, Buffered[]>();
  items.forEach(([group, id], i) => {
    const lane = lanes.get(group) ?? [];
    lane.push({ message: msg(id, { accountId: group }), group, hiddenAt: i });
    lanes.set(group, lane);
  });
  return lanes;
}

describe('local fair queue scheduling (SQS fair queues, emulated)', () => {
  it('serves a quiet group before the rest of a noisy group backlog that arrived first', () => {
    // Arrange: 30 messages of the noisy account, then one of a quiet account.
    const lanes = lanesOf([...Array.from({ length: 30 }, (_, i) => ['noisy', `n${i}`] as [string, string]), ['quiet', 'q0']]);
    const inFlight = new Map<string, number>();

    // Act
    const first = takeFairBatch(lanes, inFlight, 10);

    // Assert: the quiet message is in the very first batch, and the noisy order is kept.
    expect(first.map((b) => b.message.MessageId)).toEqual(['n0', 'q0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8']);
    expect(Object.fromEntries(inFlight)).toEqual({ noisy: 9, quiet: 1 });
  });

  it('prefers the group with the fewest messages in flight, then the one waiting longest', () => {
    const lanes = lanesOf([
      ['a', 'a0'],
      ['b', 'b0'],
      ['c', 'c0'],
    ]);
    const inFlight = new Map([
      ['a', 5],
      ['b', 1],
    ]);

    const batch = takeFairBatch(lanes, inFlight, 2);

    expect(batch.map((b) => b.message.MessageId)).toEqual(['c0', 'b0']);
    expect(lanes.get('a')?.map((b) => b.message.MessageId)).toEqual(['a0']);
    expect(lanes.has('b')).toBe(false);
  });

  it('returns what there is when the lanes run dry, and nothing from empty lanes', () => {
    const lanes = lanesOf([['a', 'a0']]);
    expect(takeFairBatch(lanes, new Map(), 10).map((b) => b.message.MessageId)).toEqual(['a0']);
    expect(takeFairBatch(lanes, new Map(), 10)).toEqual([]);
  });

  it('groups by the account in the body; anything else is its own group', () => {
    expect(groupOf(msg('1', { accountId: 'acc_1', deliveryId: 'dlv_1' }))).toBe('acc_1');
    // What a bus rule delivers: the EventBridge envelope, the account in its detail.
    expect(groupOf(msg('4', { version: '0', 'detail-type': 'ticket.created', detail: { accountId: 'acc_2', event: 'ticket.created' } }))).toBe('acc_2');
    expect(groupOf(msg('2', 'not json'))).toBe('message:2');
    expect(groupOf(msg('5', 'null'))).toBe('message:5');
    expect(groupOf(msg('3', { accountId: 42 }))).toBe('message:3');
  });
});
