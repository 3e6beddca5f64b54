import * as z from '../zod.ts';

/**
 * The words of a record and the terms of a search (decisions §13): word
 * prefixes, ignoring case and accents (NFKD with combining marks removed).
 */

/** Case- and accent-insensitive form of a word or term. */
export const fold = (s: string) => s.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase();

/** Words of a name: split at whitespace, punctuation and symbols. */
const nameWords = (name: string) => fold(name).split(/[\s\p{P}\p{S}]+/u);

/** Words of an email or a domain: its parts split at `@ . - _ +`, the email's local part and domain, and the whole of it. */
function addressWords(address: string) {
  const a = fold(address.trim());
  const at = a.lastIndexOf('@');
  return [a, ...a.split(/[@.\-_+]+/), ...(at > 0 ? [a.slice(0, at), a.slice(at + 1)] : [])];
}

/**
 * The words a term can match, reduced to those no other word starts with: a
 * term that is a prefix of a dropped word is a prefix of the word that covers
 * it, so matching is unchanged while the index keeps fewer items per record.
 */
export function recordWords(parts: { names?: (string | null | undefined)[]; addresses?: (string | null | undefined)[] }): string[] {
  const all = new Set<string>();
  for (const n of parts.names ?? []) if (n) for (const w of nameWords(n)) if (w) all.add(w);
  for (const a of parts.addresses ?? []) if (a) for (const w of addressWords(a)) if (w) all.add(w);
  const sorted = [...all].sort();
  // In sorted order a word's extensions follow it directly.
  return sorted.filter((w, i) => !(sorted[i + 1]?.startsWith(w) ?? false));
}

/** Does a record with these words match every term? */
export const matchesAll = (words: readonly string[], terms: readonly string[]) => terms.every((t) => words.some((w) => w.startsWith(t)));

export const MAX_TERM_LENGTH = 64;

/** The terms of a search: split at whitespace, folded, duplicates and terms another term extends dropped. */
export function searchTerms(search: string): string[] {
  const terms = [...new Set(fold(search).split(/\s+/u).filter(Boolean))];
  return terms.filter((t) => !terms.some((o) => o !== t && o.startsWith(t)));
}

/**
 * The `search` query parameter: terms of 1-64 characters separated by spaces
 * (all must match); blank means no filter.
 */
export const searchParam = (maxLength: number) =>
  z.optional(
    z
      .pipe(
        z.string().check(z.maxLength(maxLength)),
        z.transform((s) => s.trim() || undefined),
      )
      .check(z.refine((s) => s === undefined || s.split(/\s+/u).every((t) => [...t].length <= MAX_TERM_LENGTH), `search terms are 1-${MAX_TERM_LENGTH} characters, separated by spaces`)),
  );

/** A record's words as one attribute (`\n` before each), for a search run as a list filter. */
export const searchText = (words: readonly string[]) => words.map((w) => `\n${w}`).join('');

/** A FilterExpression matching every term as a word prefix on `searchText`. */
export function searchFilter(terms: readonly string[]) {
  return {
    expr: terms.map((_, i) => `contains(#st, :st${i})`).join(' AND '),
    names: { '#st': 'searchText' },
    values: Object.fromEntries(terms.map((t, i) => [`:st${i}`, `\n${t}`])),
  };
}
