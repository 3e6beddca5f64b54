import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { updateExpression } from '../db/update.ts';
import { PLAN_LIMITS, type Plan } from '../auth/principal.ts';
import { ddb } from '../db/client.ts';
import { keys } from '../db/keys.ts';
import { TTL_ATTRIBUTE } from '../db/table-definition.ts';
import { RateLimitedError } from '../domain/errors.ts';
import { rateLimitSettings } from './settings.ts';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  reset: number;
}

export class RateLimitExceededError extends RateLimitedError {
  constructor(
    readonly state: RateLimitState,
    now: number,
  ) {
    super(Math.max(1, state.reset - Math.floor(now / 1000)));
  }
}

/**
 * Count one request against the account's calendar-minute window. The
 * increment is conditional on the count being below the limit, so under any
 * concurrency exactly `limit` requests per window pass (decisions §4). The
 * count lives in the counters table, which has no stream: a read stays a read
 * for the event pipeline.
 */
export async function consume(accountId: string, plan: Plan, now = Date.now()): Promise<RateLimitState> {
  const limit = PLAN_LIMITS[plan];
  const windowStart = Math.floor(now / 60_000) * 60;
  const reset = windowStart + 60;
  try {
    const out = await ddb.send(
      new UpdateCommand({
        TableName: rateLimitSettings().RATE_LIMIT_TABLE_NAME,
        Key: keys.rateWindow(accountId, windowStart),
        ...updateExpression(
          { add: { count: 1 }, set: { [TTL_ATTRIBUTE]: reset + 60 } },
          { ConditionExpression: 'attribute_not_exists(#count) OR #count < :limit', names: { '#count': 'count' }, values: { ':limit': limit } },
        ),
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Number(out.Attributes?.count ?? 1);
    return { limit, remaining: Math.max(0, limit - count), reset };
  } catch (err) {
    if ((err as Error).name === 'ConditionalCheckFailedException') throw new RateLimitExceededError({ limit, remaining: 0, reset }, now);
    throw err;
  }
}
