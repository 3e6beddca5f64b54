/**
 * What a delivery attempt's answer means (decisions §7), as pure functions: a
 * 2xx succeeds; a 410 disables the webhook; anything else (another status, a
 * timeout, a refused target) retries on the schedule until the 8th attempt,
 * which is parked in the DLQ and marked failed. And what an event's end
 * means for its webhook (decisions §18): 10 events in a row that exhausted
 * their retries switch it off. delivery.ts makes the attempt and carries the
 * verdicts out.
 */

/**
 * decisions §7 (Svix's schedule): the first attempt at once, then these delays
 * after each failure; 8 attempts, about 27.6 hours in all.
 */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** SQS caps a message's visibility at 12 hours after its receive; keep a margin for the time the attempt took. */
const MAX_DELAY_SECONDS = 12 * 3600 - 60;

/**
 * Seconds to wait after failed try `tries` (1-based): the schedule's delay
 * plus up to 20% jitter, or the receiver's Retry-After when that is longer.
 */
export function retryDelaySeconds(tries: number, retryAfterSeconds: number | null, scale: number, random = Math.random()): number {
  const base = RETRY_DELAYS_SECONDS[Math.min(tries, RETRY_DELAYS_SECONDS.length) - 1] * (1 + 0.2 * random);
  const delay = Math.max(base, retryAfterSeconds ?? 0) * scale;
  return Math.min(MAX_DELAY_SECONDS, Math.round(delay));
}

/** Retry-After as seconds (delta-seconds or an HTTP date), or null. */
export function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - now.getTime()) / 1000));
}

/** What the consumer does with the message after an attempt. */
export type Outcome = { action: 'done' } | { action: 'retry'; delaySeconds: number } | { action: 'dead-letter'; reason: string };

/** What came back from one attempt: the status (null: no answer) or why there was none, the receiver's Retry-After, and which try of the cycle it was (1-based). */
export interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  retryAfterSeconds: number | null;
  tries: number;
}

/** The verdict on an attempt: what becomes of the message, what the delivery log shows, and whether the webhook is switched off. */
export interface AttemptVerdict {
  outcome: Outcome;
  state: 'succeeded' | 'retrying' | 'failed';
  /** The log's error: the attempt's own, or why the webhook was disabled. */
  error: string | null;
  /** When the next attempt is due (retries only). */
  nextAttemptAt: string | null;
  /** A 410: the receiver asks for no more deliveries. */
  disable: boolean;
}

/** decisions §7: any 2xx is a success. */
export const isSuccess = (statusCode: number | null): boolean => statusCode !== null && statusCode >= 200 && statusCode < 300;

/** Judge one attempt (decisions §7). `scale` multiplies the delays (tests run the schedule in milliseconds); `random` is the jitter's draw. */
export function judgeAttempt(a: AttemptResult, { scale, now, random }: { scale: number; now: Date; random?: number }): AttemptVerdict {
  if (isSuccess(a.statusCode)) return { outcome: { action: 'done' }, state: 'succeeded', error: a.error, nextAttemptAt: null, disable: false };
  if (a.statusCode === 410) return { outcome: { action: 'done' }, state: 'failed', error: 'target answered 410 Gone: webhook disabled', nextAttemptAt: null, disable: true };
  if (a.tries >= MAX_ATTEMPTS) {
    const reason = `gave up after ${a.tries} attempts (last: ${a.statusCode ?? a.error})`;
    return { outcome: { action: 'dead-letter', reason }, state: 'failed', error: a.error, nextAttemptAt: null, disable: false };
  }
  const delaySeconds = retryDelaySeconds(a.tries, a.retryAfterSeconds, scale, random);
  return { outcome: { action: 'retry', delaySeconds }, state: 'retrying', error: a.error, nextAttemptAt: new Date(now.getTime() + delaySeconds * 1000).toISOString(), disable: false };
}

/** decisions §18: this many events in a row that exhausted their retries, with no success in between, switch a webhook off. */
export const FAILING_THRESHOLD = 10;

/** How one event's delivery ended, as the failing rule counts it: delivered, every retry exhausted, or a 410. */
export type EventEnd = 'succeeded' | 'exhausted' | 'gone';

/** What the failing rule keeps on a webhook: whether it is on, and how many events in a row exhausted their retries. */
export interface WebhookHealth {
  active: boolean;
  consecutiveFailures: number;
}

/** The rule's verdict: the new count, and the reason to switch the webhook off, if any. */
export interface HealthVerdict {
  consecutiveFailures: number;
  disable: 'failing' | 'gone' | null;
}

/**
 * The failing rule (decisions §18), for one event's end: an exhausted event
 * counts one more, and the 10th in a row switches the webhook off ("failing");
 * a success resets the count; a 410 switches it off at once ("gone"). A
 * webhook already off counts nothing more (an admin's reactivation starts
 * from zero). delivery.ts writes the verdict, conditioned on what it read.
 */
export function judgeEventEnd(health: WebhookHealth, end: EventEnd): HealthVerdict {
  if (end === 'succeeded') return { consecutiveFailures: 0, disable: null };
  if (!health.active) return { consecutiveFailures: health.consecutiveFailures, disable: null };
  if (end === 'gone') return { consecutiveFailures: health.consecutiveFailures, disable: 'gone' };
  const consecutiveFailures = health.consecutiveFailures + 1;
  return { consecutiveFailures, disable: consecutiveFailures >= FAILING_THRESHOLD ? 'failing' : null };
}

/** Does the verdict change what is stored? (A success on a webhook with no failures writes nothing.) */
export const healthChanged = (health: WebhookHealth, v: HealthVerdict): boolean => v.disable !== null || v.consecutiveFailures !== health.consecutiveFailures;
