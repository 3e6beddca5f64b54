import type { DynamoDBRecord } from 'aws-lambda';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { laneOf, StreamLanes } from '../../local/stream-lanes.ts';

const record = (pk: string, sk = 'OUTBOX#e1'): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } } });
const records = (pk: string, n: number) => Array.from({ length: n }, (_, i) => record(pk, `OUTBOX#e${i}`));

/** An invoke that holds each batch until the test lets it finish. */
function heldInvoke() {
  const calls: { records: DynamoDBRecord[]; finish: () => void }[] = [];
  const invoke = (batch: DynamoDBRecord[]) => new Promise<void>((finish) => calls.push({ records: batch, finish }));
  return { calls, invoke };
}

/** One turn of the event loop: every lane's continuation queued so far has run. */
const tick = () => nextTurn();

describe('stream lanes (Lambda ParallelizationFactor, emulated)', () => {
  it("keeps an account's records in one lane, whatever their sort key", () => {
    const lane = laneOf(record('A#acc_1', 'OUTBOX#e1'), 10);
    for (let i = 0; i < 50; i++) expect(laneOf(record('A#acc_1', `OUTBOX#e${i}`), 10)).toBe(lane);
  });

  it('spreads accounts over every lane, within range', () => {
    const lanes = new Set(Array.from({ length: 200 }, (_, i) => laneOf(record(`A#acc_${i}`), 10)));
    expect([...lanes].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(laneOf(record('A#acc_1'), 1)).toBe(0);
  });

  it("hands a quiet account's record over while a busy account's backlog is still in its first batch", async () => {
    const busy = 'A#busy';
    const quiet = Array.from({ length: 50 }, (_, i) => `A#quiet_${i}`).find((pk) => laneOf(record(pk), 10) !== laneOf(record(busy), 10))!;
    const { calls, invoke } = heldInvoke();
    const lanes = new StreamLanes(10, 100, invoke);
    await lanes.add([...records(busy, 250), record(quiet)]);
    await tick();
    // Both lanes started at once: the busy lane's first 100 and the quiet record, nothing finished yet.
    expect(calls.map((c) => [c.records[0].dynamodb!.Keys!.pk.S, c.records.length])).toEqual([
      [busy, 100],
      [quiet, 1],
    ]);
    // The busy lane's next batch waits for its first, in order.
    calls[1].finish();
    await tick();
    expect(calls).toHaveLength(2);
    calls[0].finish();
    await tick();
    expect(calls[2].records.map((r) => r.dynamodb!.Keys!.sk.S)).toEqual(
      records(busy, 200)
        .slice(100)
        .map((r) => r.dynamodb!.Keys!.sk.S),
    );
    calls[2].finish();
    await tick();
    expect(calls[3].records).toHaveLength(50);
    calls[3].finish();
    await lanes.idle();
    expect(lanes.buffered).toBe(0);
  });

  it('reads ahead only so far: add waits while the limit of records waits in the lanes', async () => {
    const { calls, invoke } = heldInvoke();
    const lanes = new StreamLanes(10, 100, invoke, 150);
    let added = false;
    const adding = lanes.add(records('A#busy', 250)).then(() => (added = true));
    await tick();
    expect([added, lanes.buffered]).toEqual([false, 150]);
    calls[0].finish();
    await adding;
    expect(lanes.buffered).toBe(50);
    calls[1].finish();
    await tick();
    calls[2].finish();
    await lanes.idle();
  });
});
