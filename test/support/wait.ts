import { setImmediate as nextTurn } from 'node:timers/promises';

/** Poll until `check` returns a truthy value (or fail after the timeout). */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > until) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Wait until this process's clock has passed a stamp the API answered (ISO 8601), so that the next write is stamped later. */
export async function clockPast(stamp: string): Promise<void> {
  const at = Date.parse(stamp);
  if (Number.isNaN(at)) throw new Error(`Not a time stamp: ${stamp}`);
  // A timer for the bulk of a long wait, then turns of the event loop to the exact instant.
  const left = at - Date.now();
  if (left > 20) await new Promise((r) => setTimeout(r, left - 10));
  while (Date.now() <= at) await nextTurn();
}
