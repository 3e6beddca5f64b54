import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** Per-process tally of DynamoDB calls: what the benchmark reports per API call. */
export interface DdbCallStats {
  requests: number;
  byCommand: Record<string, number>;
  capacityUnits: number;
  millis: number;
}

export const ddbStats: DdbCallStats = { requests: 0, byCommand: {}, capacityUnits: 0, millis: 0 };

export function resetDdbStats(): DdbCallStats {
  const snapshot = { ...ddbStats, byCommand: { ...ddbStats.byCommand } };
  Object.assign(ddbStats, { requests: 0, byCommand: {}, capacityUnits: 0, millis: 0 });
  return snapshot;
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
      ddbStats.millis += performance.now() - started;
      ddbStats.requests += 1;
      const name = String(context.commandName ?? 'unknown').replace(/Command$/, '');
      ddbStats.byCommand[name] = (ddbStats.byCommand[name] ?? 0) + 1;
      ddbStats.capacityUnits += sumCapacity((out.output as Record<string, unknown>).ConsumedCapacity);
      return out;
    },
    { step: 'initialize', name: 'benchStats' },
  );
}
