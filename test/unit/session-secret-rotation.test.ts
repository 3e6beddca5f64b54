import { createHmac, randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { SESSION_SECRET_TTL_MS, sessionSecret, setSecretLoader } from '#shared/auth/secret.ts';
import { signSessionToken, verifySessionToken } from '#shared/auth/jwt.ts';
import { decodeCursor, encodeCursor } from '#shared/pagination/cursor.ts';
import { InvalidCursorError } from '#shared/domain/errors.ts';

const SECRET_ID = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:session';
const newSecret = () => randomBytes(48).toString('base64url');

/** A stand-in for Secrets Manager's version stages, read through the same loader interface the extension implements. */
function fakeSecret() {
  const state = { current: newSecret(), previous: undefined as string | undefined, reads: [] as string[] };
  const loader = async (secretId: string, stage: 'AWSCURRENT' | 'AWSPREVIOUS' = 'AWSCURRENT') => {
    expect(secretId).toBe(SECRET_ID);
    state.reads.push(stage);
    if (stage === 'AWSCURRENT') return state.current;
    if (state.previous === undefined) throw new Error('Secrets extension answered 400'); // no AWSPREVIOUS version yet
    return state.previous;
  };
  /** What `put-secret-value` does: the new value becomes AWSCURRENT, the old one AWSPREVIOUS. */
  const rotate = () => {
    state.previous = state.current;
    state.current = newSecret();
  };
  return { state, loader, rotate };
}

let clock = 1_700_000_000_000;
const now = () => clock;

describe('session secret rotation', () => {
  let secret: ReturnType<typeof fakeSecret>;
  beforeEach(() => {
    secret = fakeSecret();
    setSecretLoader(secret.loader, { secretId: SECRET_ID, now });
  });

  it('re-reads the secret once the cache TTL has passed, not before', async () => {
    const first = await sessionSecret();
    secret.rotate();
    clock += SESSION_SECRET_TTL_MS - 1;
    expect(await sessionSecret()).toBe(first);
    clock += 1;
    expect(await sessionSecret()).toBe(secret.state.current);
    expect(await sessionSecret()).not.toBe(first);
    expect(secret.state.reads).toEqual(['AWSCURRENT', 'AWSCURRENT']);
  });

  it('a failed read is retried on the next call instead of being cached', async () => {
    let fail = true;
    setSecretLoader(
      async (id, stage) => {
        if (fail) throw new Error('extension not ready');
        return secret.loader(id, stage);
      },
      { secretId: SECRET_ID, now },
    );
    await expect(sessionSecret()).rejects.toThrow('extension not ready');
    fail = false;
    expect(await sessionSecret()).toBe(secret.state.current);
  });

  it('a token signed before a rotation verifies with the previous key; new tokens use the current one', async () => {
    const { token: old } = await signSessionToken('acc_1', 'usr_1', 3600, clock);
    secret.rotate();
    clock += SESSION_SECRET_TTL_MS;
    expect(await verifySessionToken(old, clock)).toMatchObject({ sub: 'usr_1', acct: 'acc_1' });
    expect(secret.state.reads).toContain('AWSPREVIOUS');

    const { token: fresh } = await signSessionToken('acc_1', 'usr_2', 3600, clock);
    // Signed with the current key: it verifies for a container that only knows the current secret.
    setSecretLoader(async () => secret.state.current, { secretId: SECRET_ID, now });
    expect(await verifySessionToken(fresh, clock)).toMatchObject({ sub: 'usr_2' });
    expect(await verifySessionToken(old, clock)).toBeNull();
  });

  it('the previous key is read only when the current one fails', async () => {
    const { token } = await signSessionToken('acc_1', 'usr_1', 3600, clock);
    expect(await verifySessionToken(token, clock)).not.toBeNull();
    expect(secret.state.reads).toEqual(['AWSCURRENT']);
  });

  it('without a previous version, a token of an older key fails', async () => {
    const { token } = await signSessionToken('acc_1', 'usr_1', 3600, clock);
    secret.state.current = newSecret(); // replaced, with no AWSPREVIOUS left behind
    clock += SESSION_SECRET_TTL_MS;
    expect(await verifySessionToken(token, clock)).toBeNull();
  });

  it('after a second rotation, a token of two keys ago fails', async () => {
    const { token } = await signSessionToken('acc_1', 'usr_1', 3600, clock);
    secret.rotate();
    secret.rotate();
    clock += SESSION_SECRET_TTL_MS;
    expect(await verifySessionToken(token, clock)).toBeNull();
  });

  it('a token signed with a random key fails, during a rotation window too', async () => {
    secret.rotate();
    const forge = (key: Buffer) => {
      const b64 = (v: string) => Buffer.from(v).toString('base64url');
      const body = `${b64(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64(JSON.stringify({ sub: 'usr_x', acct: 'acc_1', iat: clock / 1000, exp: clock / 1000 + 60 }))}`;
      return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
    };
    expect(await verifySessionToken(forge(randomBytes(32)), clock)).toBeNull();
    // The raw secret is not the key either: keys are derived per purpose.
    expect(await verifySessionToken(forge(Buffer.from(secret.state.current)), clock)).toBeNull();
  });

  it('a cursor issued before a rotation keeps working; a forged one does not', async () => {
    const cursor = await encodeCursor({ list: 'tickets', accountId: 'acc_1', query: {}, key: { pk: 'a' } }, clock);
    secret.rotate();
    clock += SESSION_SECRET_TTL_MS;
    expect(await decodeCursor(cursor, 'tickets', 'acc_1', clock)).toMatchObject({ key: { pk: 'a' } });
    const [body] = cursor.split('.');
    const forged = `${body}.${createHmac('sha256', randomBytes(32)).update(body).digest('base64url')}`;
    await expect(decodeCursor(forged, 'tickets', 'acc_1', clock)).rejects.toBeInstanceOf(InvalidCursorError);
  });
});
