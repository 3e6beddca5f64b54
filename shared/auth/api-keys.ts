import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

/** `sk_` + 40 random base62 characters (decisions §1 asks for at least 32). */
export const generateApiKey = () => `sk_${randomBase62(40)}`;

/** Only this SHA-256 hex digest is stored. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export const looksLikeApiKey = (s: string) => /^sk_[0-9A-Za-z]{32,}$/.test(s);

const HOUR_MS = 60 * 60 * 1000;

/** The start of the UTC hour `now` falls in (ISO 8601). */
export const hourStart = (now: number) => new Date(now - (now % HOUR_MS)).toISOString();

/** Whether a key last used at `lastUsedAt` (null: never) must have its use recorded at `now`: not yet in this hour. */
export const useDue = (lastUsedAt: string | null, now: number) => lastUsedAt === null || lastUsedAt < hourStart(now);
