/**
 * fauxqs 2.4.1 runs a 20 ms interval per queue while any receive waits on it
 * (SqsQueue.startPollTimerIfNeeded: it moves delayed and expired in-flight
 * messages back and wakes the waiters). A pipeline long-polls every queue all
 * the time, so an idle `npm start` paid 50 timer callbacks a second per queue:
 * 12 queues cost ~20 ms of CPU per second doing nothing (issue #21, measured
 * with fauxqs alone). New messages still wake a waiting receive at once
 * (notifyWaiters on send); only a delay or a visibility timeout that ends while
 * a receive waits is noticed up to `intervalMs` later. fauxqs has no option
 * for it and exports only its app, so the queue class is reached by its file.
 */
export async function slowFauxqsPollTimers(intervalMs: number): Promise<void> {
  const file = new URL('./sqs/sqsStore.js', import.meta.resolve('fauxqs')).href;
  const { SqsQueue } = (await import(file)) as { SqsQueue?: { prototype: Record<string, unknown> } };
  const proto = SqsQueue?.prototype as { startPollTimerIfNeeded?: unknown; processTimers?: unknown } | undefined;
  // Another fauxqs version: leave it as it is rather than guess at its internals.
  if (!proto || typeof proto.startPollTimerIfNeeded !== 'function' || typeof proto.processTimers !== 'function') return;
  proto.startPollTimerIfNeeded = function startPollTimerIfNeeded(this: { pollTimer?: NodeJS.Timeout; processTimers(): void }) {
    if (this.pollTimer) return;
    this.pollTimer = setInterval(() => this.processTimers(), intervalMs);
  };
}
