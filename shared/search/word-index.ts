import { bindEntity } from '../db/entity.ts';
import { searchEntities } from '../db/entities/search.ts';
import { queryAll, queryPage, type Key } from '../db/query.ts';
import type { TxWrite } from '../db/transact.ts';
import { fold, matchesAll } from './words.ts';

/**
 * The word index of decisions §13: small items, one per word of a record,
 * written in the same transaction as the record; a search reads the items of
 * its most selective term by key and checks the other terms and filters on
 * them, so it reads in proportion to the matches, not to the account.
 */

export type SearchKind = 'contact' | 'organization' | 'user' | 'ticket';

/** What the index holds of a record. */
export interface Searchable {
  accountId: string;
  id: string;
  words: string[];
  /** Sort keys by sort name (the id order is `created`). */
  sort: Record<string, string>;
  /** Filter values a list may combine with a search. */
  filters?: Record<string, string | null>;
  /**
   * Words a match checks (they are in `words`) that get no index item of their own: the record finds them by key
   * instead (`KeyedWords`), so its writes carry fewer items. A ticket's id words (decisions §16).
   */
  unindexed?: readonly string[];
}

/**
 * Records whose unindexed words a search reads by key rather than through word items (a ticket by its id: the
 * ticket's own key starts with it). What is read decides for those records: a stale word item of theirs never counts.
 */
export interface KeyedWords {
  /** Could the term start an unindexed word of some record? */
  mayMatch(term: string): boolean;
  /** The records whose unindexed words may start with the term, read fresh, in key order; at most `max` + 1. */
  read(accountId: string, term: string, max: number): Promise<Searchable[]>;
}

interface WordItem {
  accountId: string;
  kind: SearchKind;
  initial: string;
  word: string;
  id: string;
  w: string[];
  s: Record<string, string>;
  f: Record<string, string | null>;
}

const wordItems = bindEntity<WordItem>(searchEntities.searchWord, { fields: ['id', 'w', 's', 'f'] });

/** First character (code point) of a word: its partition. */
const initialOf = (word: string) => String.fromCodePoint(word.codePointAt(0)!);

const itemsOf = (kind: SearchKind, r: Searchable): WordItem[] =>
  r.words.filter((word) => !r.unindexed?.includes(word)).map((word) => ({ accountId: r.accountId, kind, initial: initialOf(word), word, id: r.id, w: r.words, s: r.sort, f: r.filters ?? {} }));

const withNames = <Q extends { names: Record<string, string> }>(q: Q, names: Record<string, string>) => ({ ...q, names: { ...q.names, ...names } });

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The writes that move a record's index from `before` to `after` (either may
 * be null: create, delete). Nothing when words, sort keys and filters are
 * unchanged, so most updates cost no index write. A word dropped is deleted
 * even when unindexed: an item written for it before it was (a ticket's id
 * words once had items) goes with it.
 */
export function indexWrites(kind: SearchKind, before: Searchable | null, after: Searchable | null): TxWrite[] {
  if (before && after && same(before.words, after.words) && same(before.sort, after.sort) && same(before.filters ?? {}, after.filters ?? {})) return [];
  const writes: TxWrite[] = [];
  const kept = new Set(after?.words ?? []);
  if (before) for (const w of before.words) if (!kept.has(w)) writes.push(wordItems.delete({ accountId: before.accountId, kind, initial: initialOf(w), word: w, id: before.id }));
  if (after) for (const i of itemsOf(kind, after)) writes.push(wordItems.put(i));
  return writes;
}

/** Most records a search ranks in memory: the bound of decisions §13's exact totals. */
export const SEARCH_CAP = 10_000;

export interface SearchHits {
  /** Matching record ids in the requested order (at most SEARCH_CAP). */
  ids: string[];
  /** Each id's sort key (its position in the order, for a cursor). */
  positions: string[];
  /** More than SEARCH_CAP records match the driving term: `ids` is not the whole answer. */
  truncated: boolean;
  /** Index items read (the work done, asserted by tests). */
  read: number;
}

/**
 * The records matching every term (and the filters), sorted by `sortBy` (a
 * key of `Searchable.sort`, or `created` for id order). Reads the index items
 * of the longest term only: the other terms and the filters are checked on
 * the words and values each item carries.
 */
export async function searchIndex(
  accountId: string,
  kind: SearchKind,
  terms: string[],
  opts: { sortBy: string; forward: boolean; filters?: Record<string, string | null | undefined>; keyed?: KeyedWords },
): Promise<SearchHits> {
  const driver = terms.reduce((a, b) => ([...b].length > [...a].length ? b : a));
  const found = new Map<string, Pick<WordItem, 'id' | 's'>>();
  const filters = Object.entries(opts.filters ?? {}).filter(([, v]) => v !== undefined);
  const matches = (words: readonly string[], values: Record<string, string | null> | undefined) => matchesAll(words, terms) && !filters.some(([k, v]) => (values?.[k] ?? null) !== v);
  let read = 0;
  let truncated = false;
  // The records the term may reach by key are read first and decide for themselves, whatever word items they have.
  const decided = new Set<string>();
  if (opts.keyed?.mayMatch(driver)) {
    const records = await opts.keyed.read(accountId, driver, SEARCH_CAP * 2);
    read += records.length;
    // Past its bound the read is not the whole answer: the caller walks the list instead.
    if (records.length > SEARCH_CAP * 2) truncated = true;
    for (const r of records) {
      decided.add(r.id);
      if (matches(r.words, r.filters ?? {})) found.set(r.id, { id: r.id, s: r.sort });
    }
    if (truncated || found.size > SEARCH_CAP) return { ids: [], positions: [], truncated: true, read };
  }
  const items = await queryAll<Record<string, unknown>>({
    ...withNames(wordItems.query('byPrefix', { accountId, kind, initial: initialOf(driver) }, { skBeginsWith: driver }), { '#i': 'id', '#w': 'w', '#s': 's', '#f': 'f' }),
    projection: '#i, #w, #s, #f',
    // Stop reading once the cap is passed: the caller falls back to the bounded list walk.
    until: (soFar) => soFar.length > SEARCH_CAP * 2,
  });
  read += items.length;
  for (const raw of items) {
    const i = raw as unknown as WordItem;
    if (found.has(i.id) || decided.has(i.id) || !matches(i.w, i.f)) continue;
    found.set(i.id, i);
    if (found.size > SEARCH_CAP) {
      truncated = true;
      break;
    }
  }
  const hits = [...found.values()];
  const key = (i: Pick<WordItem, 'id' | 's'>) => (opts.sortBy === 'created' ? i.id : (i.s?.[opts.sortBy] ?? ''));
  hits.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) * (opts.forward ? 1 : -1));
  const kept = hits.slice(0, SEARCH_CAP);
  return { ids: kept.map((h) => h.id), positions: kept.map(key), truncated, read };
}

/**
 * Ids of up to `limit` records of a kind that hold exactly this word (the
 * word as the index stores it: folded), by key, from `startKey`: an erasure
 * and a person's data (decisions §23) find a person's tickets by their whole
 * email address, a page at a time, whatever the account holds.
 */
export async function idsWithWord(accountId: string, kind: SearchKind, word: string, limit: number, startKey?: Key): Promise<{ ids: string[]; nextKey?: Key }> {
  const folded = fold(word);
  const page = await queryPage<Record<string, unknown>>({
    ...wordItems.query('byPrefix', { accountId, kind, initial: initialOf(folded) }, { skBeginsWith: `${folded}\u0001` }),
    limit,
    startKey,
  });
  return { ids: page.items.map((i) => String(i.id)), nextKey: page.nextKey };
}
