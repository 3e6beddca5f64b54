import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Per-process tally of DynamoDB calls: what the benchmark reports per API call. */
export interface DdbCallStats {
  requests: number;
  byCommand: Record<string, number>;
  capacityUnits: number;
  millis: number;
  /** [start, end] of each call, to find the round trips on the critical path. */
  spans: Array<[number, number]>;
}

export const ddbStats: DdbCallStats = { requests: 0, byCommand: {}, capacityUnits: 0, millis: 0, spans: [] };

export function resetDdbStats(): DdbCallStats & { criticalPath: number } {
  const snapshot = { ...ddbStats, byCommand: { ...ddbStats.byCommand }, spans: [...ddbStats.spans], criticalPath: sequentialSteps(ddbStats.spans) };
  Object.assign(ddbStats, { requests: 0, byCommand: {}, capacityUnits: 0, millis: 0, spans: [] });
  return snapshot;
}

/**
 * Round trips on the critical path: calls that overlap in time ran in
 * parallel and count once; each gap starts a new sequential step.
 */
export function sequentialSteps(spans: Array<[number, number]>): number {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let steps = 0;
  let end = -Infinity;
  for (const [s, e] of sorted) {
    if (s >= end) steps += 1;
    end = Math.max(end, e);
  }
  return steps;
}

const sumCapacity = (c: unknown): number => {
  if (!c) return 0;
  if (Array.isArray(c)) return c.reduce((s, x) => s + sumCapacity(x), 0);
  return Number((c as { CapacityUnits?: number }).CapacityUnits ?? 0);
};

/** Count requests, consumed capacity and time spent in DynamoDB (enabled with DDB_STATS=1, for `npm run bench`). */
export function instrument(client: DynamoDBDocumentClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      input.ReturnConsumedCapacity = 'TOTAL';
      const started = performance.now();
      const out = await next(args);
      const ended = performance.now();
      ddbStats.millis += ended - started;
      ddbStats.spans.push([started, ended]);
      ddbStats.requests += 1;
      const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      ddbStats.byCommand[name] = (ddbStats.byCommand[name] ?? 0) + 1;
      ddbStats.capacityUnits += sumCapacity((out.output as Record<string, unknown>).ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name: 'benchStats' },
  );
}
