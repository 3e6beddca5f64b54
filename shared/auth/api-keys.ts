import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids.ts';

/** `sk_` + 40 random base62 characters (decisions §1 asks for at least 32). */
export const generateApiKey = () => `sk_${randomBase62(40)}`;

/** Only this SHA-256 hex digest is stored. */
export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export const looksLikeApiKey = (s: string) => /^sk_[0-9A-Za-z]{32,}$/.test(s);
