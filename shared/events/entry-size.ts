import type { EventDetail } from './detail.ts';
import { escapeForTransport } from './transport.ts';

/** EventBridge refuses a PutEvents entry (and a whole request) over 256 KB. */
export const MAX_ENTRY_BYTES = 256 * 1024;
/**
 * What an event may use of that: the SQS target receives it wrapped in the
 * EventBridge envelope (about 300 bytes of id, account, region, time), and SQS
 * caps a message at 256 KB too, so a margin keeps the wrapped message legal.
 */
export const EVENT_BUDGET_BYTES = MAX_ENTRY_BYTES - 2048;
/** decisions §7: no string is shortened below this many characters. */
export const MIN_TRUNCATED_CHARS = 64;

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/**
 * The size of a PutEvents entry as EventBridge counts it (Time 14 bytes,
 * Source, DetailType, Detail and Resources in UTF-8). The detail is measured
 * in the form the transports carry (refused characters JSON-escaped), which
 * is never smaller, so an event that fits here fits on every hop.
 */
export function entrySize(entry: { source: string; detailType: string; detail: string; resources?: readonly string[] }): number {
  return 14 + bytes(entry.source) + bytes(entry.detailType) + bytes(escapeForTransport(entry.detail)) + (entry.resources ?? []).reduce((n, r) => n + bytes(r), 0);
}

/** Keys whose string values are never cut (decisions §7: ids, event names, status values). */
const isProtectedKey = (key: string) => key === 'id' || key === 'event' || key === 'status' || key === 'type' || /Id$/.test(key) || /^(timestamp|createdAt|updatedAt)$/.test(key);

/** A string value inside `data` that may be shortened, found by its container and key. */
interface Cuttable {
  holder: Record<string | number, unknown>;
  key: string | number;
  /** Length in code points (a cut never splits a surrogate pair). */
  length: number;
}

function collect(value: unknown, key: string | number, holder: Record<string | number, unknown> | null, out: Cuttable[], parentKey: string) {
  if (typeof value === 'string') {
    // Array entries inherit the protection of the array's key (e.g. a list of ids).
    const name = typeof key === 'number' ? parentKey : key;
    if (holder && !isProtectedKey(name)) {
      const length = [...value].length;
      if (length > MIN_TRUNCATED_CHARS) out.push({ holder, key, length });
    }
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v, i) => {
      collect(v, i, value as unknown as Record<number, unknown>, out, typeof key === 'number' ? parentKey : key);
    });
  } else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) collect(v, k, value as Record<string, unknown>, out, k);
}

const cut = (s: string, max: number) => [...s].slice(0, max).join('');

/**
 * decisions §7: bound an event so its PutEvents entry fits, whatever the
 * ticket holds. The longest strings in `data` are shortened first (to a common
 * cap, found by bisection), none below 64 characters, never ids, event names
 * or status values; the payload then says `truncated: true` next to `event`.
 * If even that cannot fit (thousands of short values), `data` keeps only the
 * ticket id and receivers fetch the ticket. The input is not modified.
 */
export function boundDetail<T extends EventDetail>(detail: T, source: string, budget = EVENT_BUDGET_BYTES): T & { truncated?: true } {
  const size = (d: unknown) => entrySize({ source, detailType: detail.event, detail: JSON.stringify(d) });
  if (size(detail) <= budget) return detail;
  const withCap = (cap: number): T => {
    const copy = structuredClone({ ...detail, truncated: true }) as T & { truncated: boolean };
    const found: Cuttable[] = [];
    collect(copy.data, 'data', null, found, 'data');
    for (const c of found) if (c.length > cap) c.holder[c.key] = cut(c.holder[c.key] as string, cap);
    // `truncated` sits next to `event` (decisions §7): rebuild the key order for readers of the raw JSON.
    const { eventId, accountId, event, truncated, ...rest } = copy;
    return { eventId, accountId, event, truncated, ...rest } as unknown as T;
  };
  const found: Cuttable[] = [];
  collect(detail.data, 'data', null, found, 'data');
  const longest = found.reduce((m, c) => Math.max(m, c.length), MIN_TRUNCATED_CHARS);
  if (size(withCap(MIN_TRUNCATED_CHARS)) > budget) {
    const ticket = (detail.data as { ticket?: { id?: unknown } }).ticket;
    const { eventId, accountId, event, ...rest } = detail;
    return { eventId, accountId, event, truncated: true, ...rest, data: ticket && typeof ticket.id === 'string' ? { ticket: { id: ticket.id } } : {} } as unknown as T;
  }
  // Largest cap that fits: every string above it is cut to it, so the longest ones lose the most.
  let lo = MIN_TRUNCATED_CHARS;
  let hi = longest;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (size(withCap(mid)) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return withCap(lo);
}
