import type { IndexName } from './table-definition.ts';

/**
 * Entity declarations: pure data (no I/O), so the catalog in keys.ts can be
 * read by the docs generator and the CDK app without a DynamoDB client.
 * entity.ts binds a declaration to a domain record and builds its reads and
 * writes.
 */

/** How a placeholder's value is written into a key. */
export const FORMATS = {
  /** Case-insensitive order and uniqueness (names, emails, domains). */
  lower: (v: string) => v.toLowerCase(),
} as const satisfies Record<string, (v: string) => string>;
export type Format = keyof typeof FORMATS;

type Part = string | { field: string; format?: Format };

export interface Template {
  readonly source: string;
  readonly fields: readonly string[];
  /** The constant text before the first placeholder (a query's `begins_with` prefix). */
  readonly prefix: string;
  /** The key's leading part these values fix: its text up to the first placeholder without a value (a query's `begins_with`). */
  prefixOf(values: object): string;
  /** The key for these values, or undefined when a placeholder has no value. */
  build(values: object): string | undefined;
}

const templates = new Map<string, Template>();

/** Compile a template once (templates are module-level constants, so the cache stays small). */
export function template(source: string): Template {
  const cached = templates.get(source);
  if (cached) return cached;
  const parts: Part[] = [];
  const re = /\{(\w+)(?::(\w+))?\}/g;
  let at = 0;
  for (let m = re.exec(source); m; m = re.exec(source)) {
    if (m.index > at) parts.push(source.slice(at, m.index));
    const format = m[2] as Format | undefined;
    if (format && !(format in FORMATS)) throw new Error(`Unknown key format ${format} in template ${source}`);
    parts.push({ field: m[1], format });
    at = m.index + m[0].length;
  }
  if (at < source.length) parts.push(source.slice(at));
  const fields = parts.filter((p): p is Exclude<Part, string> => typeof p !== 'string').map((p) => p.field);
  /** The key's text for these values, up to the first placeholder without one. */
  const fill = (values: object) => {
    let text = '';
    for (const p of parts) {
      if (typeof p === 'string') {
        text += p;
        continue;
      }
      const v = (values as Record<string, unknown>)[p.field];
      if (v === undefined || v === null) return { text, complete: false };
      text += p.format ? FORMATS[p.format](String(v)) : String(v);
    }
    return { text, complete: true };
  };
  const t: Template = {
    source,
    fields,
    prefix: typeof parts[0] === 'string' ? parts[0] : '',
    prefixOf: (values) => fill(values).text,
    build(values) {
      const { text, complete } = fill(values);
      return complete ? text : undefined;
    },
  };
  templates.set(source, t);
  return t;
}

/** The table itself, one of its overloaded GSIs, or the outbox's own index. */
export type Slot = 'table' | IndexName;

export interface IndexDeclaration {
  /** Where the pattern reads: the table's own keys (a prefix of the sort key) or a GSI slot. */
  slot: Slot;
  pk: string;
  sk: string;
  /** The access pattern, as docs/data-model.md states it (which endpoint or job reads it). */
  pattern: string;
}

export interface EntityDeclaration {
  /** The item's `type` attribute. */
  type: string;
  /** The module whose service alone writes these items. */
  owner: string;
  description: string;
  key: { pk: string; sk: string };
  /** Named access patterns; a GSI slot may be taken once per entity. */
  indexes?: Record<string, IndexDeclaration>;
  /** Attribute holding the optimistic-locking version, when the entity has one. */
  version?: string;
  /** Items that expire carry the TTL attribute. */
  expires?: boolean;
  /**
   * The attributes that can hold personal data (a person's name, address,
   * words; decisions §23), empty when none can. docs/privacy.md says how each
   * is erased or redacted, and test/unit/privacy-doc.test.ts holds the two
   * equal: a new entity says here what it holds.
   */
  personal?: readonly string[];
}

/** Declare an entity's keys (keys.ts); checked once at load: one pattern per GSI slot. */
export function declareEntity<const D extends EntityDeclaration>(d: D): D {
  const slots = Object.values(d.indexes ?? {})
    .map((i) => i.slot)
    .filter((s) => s !== 'table');
  if (new Set(slots).size !== slots.length) throw new Error(`Entity ${d.type} declares a GSI slot twice`);
  return d;
}
