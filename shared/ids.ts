import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

let lastTime = -1;
let lastRandom: number[] = [];

/** The previous random part plus one (base 32), so ids minted in the same millisecond keep their order. */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i] < 31) {
      next[i] += 1;
      return next;
    }
    next[i] = 0;
  }
  return next;
}

/**
 * Time-ordered id (ULID layout: 48-bit ms timestamp + 80 random bits, Crockford
 * base32). Sorting ids sorts records by creation time, so "newest first" lists
 * are a plain key-ordered Query with no extra index. Within one process and
 * millisecond the random part increases (monotonic ULID), so records created
 * together (a field's inline options) list in the order they were made.
 */
export function newId(prefix: string, now = Date.now()): string {
  let t = Math.max(now, lastTime);
  if (t === lastTime) lastRandom = increment(lastRandom);
  else lastRandom = [...randomBytes(16)].map((b) => b % 32);
  lastTime = t;
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return `${prefix}_${time}${lastRandom.map((d) => CROCKFORD[d]).join('')}`;
}

/** Uniformly random base62 string (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}
