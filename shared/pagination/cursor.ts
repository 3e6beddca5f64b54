import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidCursorError } from '../domain/errors.ts';
import { derivedKey, verifiesWithSessionKey } from '../auth/secret.ts';

/** Cursors stop working after 24 hours (api-spec Limits). */
export const CURSOR_TTL_MS = 24 * 60 * 60 * 1000;

/** What a cursor carries: the list it belongs to, the first query's filters and sort, and where to resume. */
export interface CursorState<Q> {
  list: string;
  accountId: string;
  query: Q;
  key: Record<string, string>;
  total?: number;
  issuedAt: number;
}

/** Opaque, signed cursor: base64url(JSON).base64url(HMAC-SHA256). */
export async function encodeCursor<Q>(state: Omit<CursorState<Q>, 'issuedAt'>, now = Date.now()): Promise<string> {
  const body = Buffer.from(JSON.stringify({ ...state, issuedAt: now })).toString('base64url');
  const sig = createHmac('sha256', await derivedKey('cursor'))
    .update(body)
    .digest('base64url');
  return `${body}.${sig}`;
}

/**
 * Verify and open a cursor. A cursor of another list or account, a bad
 * signature or an expired one (older than `ttlMs`: 24 hours unless the list
 * says otherwise) are all `invalid_cursor`.
 */
export async function decodeCursor<Q>(cursor: string, list: string, accountId: string, now = Date.now(), ttlMs = CURSOR_TTL_MS): Promise<CursorState<Q>> {
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined) throw new InvalidCursorError();
  const given = Buffer.from(sig, 'base64url');
  const signedBy = (key: Buffer) => {
    const expected = createHmac('sha256', key).update(body).digest();
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
  if (!(await verifiesWithSessionKey('cursor', signedBy))) throw new InvalidCursorError();
  let state: CursorState<Q>;
  try {
    state = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (state.list !== list || state.accountId !== accountId) throw new InvalidCursorError();
  if (typeof state.issuedAt !== 'number' || now - state.issuedAt > ttlMs) throw new InvalidCursorError();
  return state;
}
