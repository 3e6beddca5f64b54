import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import type { BusEntry, EventBusPort } from '#shared/events/bus.ts';
import { eventually } from '../support/wait.ts';

// A store in place of DynamoDB that holds every BatchWriteItem (the outbox deletes) until the test answers it.
const held: { keys: string[]; answer: () => void }[] = [];
const store = createServer((req, res: ServerResponse) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString() || '{}');
    const reply = () => res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end(JSON.stringify({ UnprocessedItems: {} }));
    if (!String(req.headers['x-amz-target']).endsWith('BatchWriteItem')) return res.writeHead(400).end('{}');
    const requests = Object.values(body.RequestItems as Record<string, { DeleteRequest: { Key: { sk: { S: string } } } }[]>).flat();
    held.push({ keys: requests.map((r) => r.DeleteRequest.Key.sk.S), answer: reply });
  });
});
await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
afterAll(() => {
  store.closeAllConnections();
  return new Promise<void>((resolve) => store.close(() => resolve()));
});
// The client reads its endpoint once, when first loaded: this file's store, not the unit tests' discard port.
process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
const { outboxDeletesBehind, publishStreamBatch } = await import('#shared/events/publisher.ts');
const { outboxItems } = await import('#shared/events/outbox.ts');

/** A bus that takes every entry, keeping the event ids of each PutEvents call in order. */
function recordingBus(): EventBusPort & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    calls,
    async putEvents(entries: BusEntry[]) {
      calls.push(entries.map((e) => JSON.parse(e.detail).eventId));
      return { failedEntryCount: 0, entries: entries.map(() => ({ eventId: 'bus-id' })) };
    },
  } as EventBusPort & { calls: string[][] };
}

/** A stream batch of new outbox items of one account, as the table's stream hands them to the publisher. */
function streamBatch(accountId: string, eventIds: string[]): DynamoDBStreamEvent {
  return {
    Records: eventIds.map((eventId, i) => {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
      const item = outboxItems.item({
        eventId,
        accountId,
        source: 'support-desk.tickets',
        detailType: 'ticket.updated',
        detail: { eventId, accountId, event: 'ticket.updated', timestamp: at, data: { ticket: { id: 'tkt_1', updatedFields: {} } } },
        createdAt: at,
      });
      const image = marshall(item, { removeUndefinedValues: true }) as never;
      return { eventName: 'INSERT', dynamodb: { Keys: { pk: image['pk'], sk: image['sk'] }, NewImage: image, SequenceNumber: String(i) } };
    }),
  };
}

/** Poll until `check` holds (the store's side of a request arrives a few turns after it is sent). */
async function until(check: () => boolean): Promise<void> {
  await eventually(check, 1_000, "the store's side of the request");
  expect(check()).toBe(true);
}

describe('the stream publisher leaves its outbox deletes behind it (issue 30)', () => {
  it("publishes an account's next batch while the previous batch's deletes are unanswered, in order, and settles them before a clean stop", async () => {
    const bus = recordingBus();
    const first = ['evt_a1', 'evt_a2', 'evt_a3'];
    const second = ['evt_a4', 'evt_a5'];

    // Act: two batches of one account, one after the other (a stream lane), the store answering no delete.
    const one = await publishStreamBatch(bus, streamBatch('acc_busy', first));
    await until(() => held.length === 1);
    const two = await publishStreamBatch(bus, streamBatch('acc_busy', second));
    await until(() => held.length === 2);

    // Assert: both batches went to the bus, in the account's order, while neither batch's delete was answered.
    expect([one, two]).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [] }]);
    expect(bus.calls).toEqual([first, second]);
    expect(held.map((h) => h.keys.length)).toEqual([3, 2]);
    // A clean stop waits for what is still running: not settled until the store answers both.
    let settled = false;
    const draining = outboxDeletesBehind().then(() => (settled = true));
    const drainHooks = (globalThis as Record<symbol, Set<() => Promise<unknown>> | undefined>)[Symbol.for('support-desk.drain')];
    expect(drainHooks?.has(outboxDeletesBehind)).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    for (const h of held) h.answer();
    await draining;
    expect(settled).toBe(true);
  });

  it('gathers the keys of batches published while every delete call is busy into full calls of 25', async () => {
    const bus = recordingBus();
    held.length = 0;
    // Act: twenty batches of 5, as a lane hands them over under a burst; the store answers nothing meanwhile.
    for (let b = 0; b < 20; b++)
      await publishStreamBatch(
        bus,
        streamBatch(
          'acc_burst',
          Array.from({ length: 5 }, (_, i) => `evt_b${b}_${i}`),
        ),
      );
    await until(() => held.length === 4);
    // ... then answers each call as it comes.
    for (let answered = 0; answered < held.length;) {
      held[answered++].answer();
      await until(() => answered < held.length || held.reduce((n, h) => n + h.keys.length, 0) === 100);
    }
    await outboxDeletesBehind();

    // Assert: all published, in order; every key deleted once, in 8 calls: the first four batches' own, then the
    // sixteen waiting batches' keys 25 to a call (a call per batch would have made 20).
    expect(bus.calls.map((c) => c[0])).toEqual(Array.from({ length: 20 }, (_, b) => `evt_b${b}_0`));
    expect(new Set(held.flatMap((h) => h.keys)).size).toBe(100);
    expect(held.map((h) => h.keys.length)).toEqual([5, 5, 5, 5, 25, 25, 25, 5]);
  });
});
