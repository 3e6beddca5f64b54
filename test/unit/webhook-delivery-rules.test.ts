import { describe, expect, it } from 'vitest';
import {
  FAILING_THRESHOLD,
  healthChanged,
  judgeAttempt,
  judgeEventEnd,
  MAX_ATTEMPTS,
  type AttemptResult,
  type AttemptVerdict,
  type EventEnd,
  type WebhookHealth,
} from '#shared/webhooks/delivery-rules.ts';
import { liveSecrets, ROTATION_OVERLAP_MS } from '#shared/webhooks/signing.ts';

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

/** Events' ends in order, folded through the rule from a fresh webhook: the stored health after each, and where it was switched off. */
function run(ends: EventEnd[], start: WebhookHealth = { active: true, consecutiveFailures: 0 }) {
  let health = start;
  let disabled: { at: number; reason: string } | null = null;
  let writes = 0;
  ends.forEach((end, i) => {
    const verdict = judgeEventEnd(health, end);
    if (healthChanged(health, verdict)) writes++;
    if (verdict.disable && !disabled) disabled = { at: i + 1, reason: verdict.disable };
    health = { active: health.active && !verdict.disable, consecutiveFailures: verdict.consecutiveFailures };
  });
  return { health, disabled, writes };
}

const times = (n: number, end: EventEnd): EventEnd[] => Array.from({ length: n }, () => end);

const healthCases: { name: string; ends: EventEnd[]; start?: WebhookHealth; health: WebhookHealth; disabled: { at: number; reason: string } | null }[] = [
  {
    name: '10 exhausted events in a row switch it off at the 10th (failing)',
    ends: times(10, 'exhausted'),
    health: { active: false, consecutiveFailures: 10 },
    disabled: { at: 10, reason: 'failing' },
  },
  { name: '9 exhausted events leave it on, counting 9', ends: times(9, 'exhausted'), health: { active: true, consecutiveFailures: 9 }, disabled: null },
  { name: '9 exhausted then a success: on, count back to 0', ends: [...times(9, 'exhausted'), 'succeeded'], health: { active: true, consecutiveFailures: 0 }, disabled: null },
  {
    name: 'a success resets the count: 9 exhausted, a success, 9 exhausted stays on',
    ends: [...times(9, 'exhausted'), 'succeeded', ...times(9, 'exhausted')],
    health: { active: true, consecutiveFailures: 9 },
    disabled: null,
  },
  {
    name: 'after a success it takes 10 more in a row',
    ends: [...times(5, 'exhausted'), 'succeeded', ...times(10, 'exhausted')],
    health: { active: false, consecutiveFailures: 10 },
    disabled: { at: 16, reason: 'failing' },
  },
  { name: 'a 410 switches it off at once (gone), keeping the count', ends: ['exhausted', 'exhausted', 'gone'], health: { active: false, consecutiveFailures: 2 }, disabled: { at: 3, reason: 'gone' } },
  { name: 'a webhook switched off counts nothing more', ends: times(12, 'exhausted'), health: { active: false, consecutiveFailures: 10 }, disabled: { at: 10, reason: 'failing' } },
  {
    name: 'a webhook an admin switched off is not switched off again',
    ends: ['exhausted', 'gone'],
    start: { active: false, consecutiveFailures: 0 },
    health: { active: false, consecutiveFailures: 0 },
    disabled: null,
  },
  { name: 'successes on a healthy webhook change nothing', ends: times(3, 'succeeded'), health: { active: true, consecutiveFailures: 0 }, disabled: null },
];

describe('judgeEventEnd: the failing rule (decisions §18)', () => {
  it('switches off at 10', () => {
    expect(FAILING_THRESHOLD).toBe(10);
  });

  it.each(healthCases)('$name', ({ ends, start, health, disabled }) => {
    // Act
    const result = run(ends, start);

    // Assess
    expect(result.health).toEqual(health);
    expect(result.disabled).toEqual(disabled);
  });

  it('writes nothing for a success on a webhook without failures (the common case costs no request)', () => {
    // Act
    const result = run(['succeeded', 'succeeded', 'exhausted', 'succeeded', 'succeeded']);

    // Assess: the exhausted event and the success that reset it.
    expect(result.writes).toBe(2);
  });
});

describe('liveSecrets: a rotation signs with both secrets for 24 hours (decisions §18)', () => {
  const rotatedAt = '2026-01-05T09:00:00.000Z';
  const rotated = { signingSecret: 'whsec_new', previousSigningSecret: 'whsec_old', signingSecretRotatedAt: rotatedAt };
  const at = (ms: number) => new Date(Date.parse(rotatedAt) + ms);

  it.each([
    ['never rotated', { signingSecret: 'whsec_new', previousSigningSecret: null, signingSecretRotatedAt: null }, at(0), ['whsec_new']],
    ['right after the rotation', rotated, at(0), ['whsec_new', 'whsec_old']],
    ['a millisecond before the 24 hours end', rotated, at(ROTATION_OVERLAP_MS - 1), ['whsec_new', 'whsec_old']],
    ['when the 24 hours end', rotated, at(ROTATION_OVERLAP_MS), ['whsec_new']],
    ['days later', rotated, at(3 * ROTATION_OVERLAP_MS), ['whsec_new']],
  ] as const)('%s', (_name, secrets, now, expected) => {
    expect(liveSecrets(secrets, now)).toEqual(expected);
  });
});
