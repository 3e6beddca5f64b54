import { describe, expect, it } from 'vitest';
import { judgeAttempt, MAX_ATTEMPTS, type AttemptResult, type AttemptVerdict } from '#shared/webhooks/delivery-rules.ts';

const NOW = new Date('2026-01-05T09:00:00.000Z');
const later = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();
const answer = (statusCode: number | null, tries: number, more: Partial<AttemptResult> = {}): AttemptResult => ({ statusCode, error: null, retryAfterSeconds: null, tries, ...more });

const done = (state: AttemptVerdict['state'], error: string | null = null, disable = false): AttemptVerdict => ({ outcome: { action: 'done' }, state, error, nextAttemptAt: null, disable });
const retry = (delaySeconds: number, error: string | null = null): AttemptVerdict => ({
  outcome: { action: 'retry', delaySeconds },
  state: 'retrying',
  error,
  nextAttemptAt: later(delaySeconds),
  disable: false,
});
const parked = (reason: string, error: string | null = null): AttemptVerdict => ({ outcome: { action: 'dead-letter', reason }, state: 'failed', error, nextAttemptAt: null, disable: false });

const GONE = 'target answered 410 Gone: webhook disabled';

const cases: { name: string; attempt: AttemptResult; random?: number; verdict: AttemptVerdict }[] = [
  // success
  { name: '200 succeeds', attempt: answer(200, 1), verdict: done('succeeded') },
  { name: '204 succeeds', attempt: answer(204, 3), verdict: done('succeeded') },
  { name: '299 succeeds', attempt: answer(299, 1), verdict: done('succeeded') },
  { name: 'a 2xx on the last attempt succeeds', attempt: answer(202, MAX_ATTEMPTS), verdict: done('succeeded') },

  // 410
  { name: '410 disables the webhook and ends the delivery', attempt: answer(410, 1), verdict: done('failed', GONE, true) },
  { name: '410 on the last attempt disables rather than parks', attempt: answer(410, MAX_ATTEMPTS), verdict: done('failed', GONE, true) },

  // retries on the schedule
  { name: 'a 500 on the first try retries after 5 s', attempt: answer(500, 1), random: 0, verdict: retry(5) },
  { name: 'jitter adds up to 20%', attempt: answer(500, 3), random: 1, verdict: retry(2160) },
  { name: 'the 7th failed try waits 10 h', attempt: answer(503, 7), random: 0, verdict: retry(36_000) },
  { name: 'a redirect is not a success', attempt: answer(301, 1), random: 0, verdict: retry(5) },
  { name: 'a 404 retries like any other failure', attempt: answer(404, 2), random: 0, verdict: retry(300) },
  { name: 'no answer (timeout, refused target) retries with its error', attempt: answer(null, 1, { error: 'timed out after 10000 ms' }), random: 0, verdict: retry(5, 'timed out after 10000 ms') },
  { name: 'a longer Retry-After is honoured', attempt: answer(429, 1, { retryAfterSeconds: 120 }), random: 0, verdict: retry(120) },
  { name: 'a shorter Retry-After is not', attempt: answer(429, 3, { retryAfterSeconds: 10 }), random: 0, verdict: retry(1800) },
  { name: 'a Retry-After past 12 h stays within the visibility limit', attempt: answer(503, 2, { retryAfterSeconds: 86_400 }), random: 0, verdict: retry(12 * 3600 - 60) },

  // parked after the last attempt
  { name: 'the 8th failed attempt is parked, with the last status', attempt: answer(500, MAX_ATTEMPTS), verdict: parked('gave up after 8 attempts (last: 500)') },
  {
    name: 'the 8th attempt without an answer is parked, with its error',
    attempt: answer(null, MAX_ATTEMPTS, { error: 'connection refused' }),
    verdict: parked('gave up after 8 attempts (last: connection refused)', 'connection refused'),
  },
];

describe('judgeAttempt: what a delivery attempt leads to (decisions §7)', () => {
  it.each(cases)('$name', ({ attempt, random, verdict }) => {
    // Act
    const judged = judgeAttempt(attempt, { scale: 1, now: NOW, random: random ?? 0.5 });

    // Assess
    expect(judged).toEqual(verdict);
  });

  it('scales every delay (tests run the schedule in milliseconds)', () => {
    // Act
    const judged = judgeAttempt(answer(500, 2), { scale: 0.001, now: NOW, random: 0 });

    // Assess
    expect(judged.outcome).toEqual({ action: 'retry', delaySeconds: 0 });
    expect(judged.nextAttemptAt).toBe(NOW.toISOString());
  });
});
