import type { DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { laneOf } from '../../local/pipeline.ts';

const record = (pk: string, sk = 'OUTBOX#e1'): DynamoDBRecord => ({ eventName: 'INSERT', dynamodb: { Keys: { pk: { S: pk }, sk: { S: sk } } } });

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
});
