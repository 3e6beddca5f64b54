import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';

// Locally the secret is fixed (SESSION_SECRET); SESSION_SECRET_PREVIOUS plays AWSPREVIOUS.
// The environment is read once per module load (a cold start), so each "container" is a fresh import.
const original = { ...process.env };
const coldStart = async (vars: { SESSION_SECRET: string; SESSION_SECRET_PREVIOUS?: string }) => {
  vi.resetModules();
  process.env.SESSION_SECRET = vars.SESSION_SECRET;
  if (vars.SESSION_SECRET_PREVIOUS) process.env.SESSION_SECRET_PREVIOUS = vars.SESSION_SECRET_PREVIOUS;
  else delete process.env.SESSION_SECRET_PREVIOUS;
  return import('#shared/auth/jwt.ts');
};

describe('local session secret with a previous one', () => {
  afterEach(() => {
    process.env = { ...original };
  });

  it('a token of SESSION_SECRET_PREVIOUS verifies; without it configured, it does not', async () => {
    const before = randomBytes(48).toString('base64url');
    const after = randomBytes(48).toString('base64url');
    const now = Date.now();
    const { token } = await (await coldStart({ SESSION_SECRET: before })).signSessionToken('acc_1', 'usr_1', 60, now);

    const rotated = await coldStart({ SESSION_SECRET: after, SESSION_SECRET_PREVIOUS: before });
    expect(await rotated.verifySessionToken(token, now)).toMatchObject({ sub: 'usr_1', acct: 'acc_1' });

    const withoutPrevious = await coldStart({ SESSION_SECRET: after });
    expect(await withoutPrevious.verifySessionToken(token, now)).toBeNull();
  });
});
