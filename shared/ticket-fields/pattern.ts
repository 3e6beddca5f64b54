import type { RE2JS } from 're2js';

/**
 * RE2 (147 KB minified, the largest part of every bundle that checks custom
 * fields) is loaded on first use, from its own chunk (infra/bundling.ts):
 * only calls that meet a regex field's pattern or value need it.
 */
let re2: typeof RE2JS | undefined;

/** Load RE2 before compilePattern or patternTest runs (once per container; later calls return at once). */
export async function loadPatterns(): Promise<void> {
  re2 ??= (await import('re2js')).RE2JS;
}

/** Compiled patterns by source; bounded, since patterns come from admins of many accounts. */
const cache = new Map<string, RE2JS | null>();
const CACHE_SIZE = 500;

/**
 * A regex field's pattern compiled with RE2 (decisions §6): matching is linear
 * in the value whatever the pattern, so no time bound is needed and a valid
 * value is never refused under load. Null when RE2 cannot compile it
 * (backreferences, lookaround, repeat counts over 1000, syntax errors).
 */
export function compilePattern(source: string): RE2JS | null {
  if (!re2) throw new Error('RE2 is not loaded: await loadPatterns() first');
  if (cache.has(source)) return cache.get(source)!;
  let compiled: RE2JS | null;
  try {
    compiled = re2.compile(source);
  } catch {
    compiled = null;
  }
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(source, compiled);
  return compiled;
}

/** Does the value contain a match (like RegExp.test: unanchored unless the pattern anchors)? Null when the pattern is not RE2. */
export function patternTest(source: string, value: string): boolean | null {
  return compilePattern(source)?.test(value) ?? null;
}
