import { setTimeout as sleep } from 'node:timers/promises';
import { ConflictError } from '../domain/errors.ts';

/**
 * Re-run a read-decide-write operation when its conditional write lost a race
 * (the item or a count it relied on changed). Each attempt re-reads, so no
 * update is lost; after the last attempt the conflict reaches the caller (409).
 */
export async function retryOnConflict<T>(op: () => Promise<T>, retryable: (err: unknown) => boolean = (err) => err instanceof ConflictError, attempts = 40): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (!retryable(err) || attempt >= attempts) throw err;
      await sleep(Math.random() * 5 * Math.min(attempt, 10));
    }
  }
}
