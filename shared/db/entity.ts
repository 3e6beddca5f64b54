import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from './client.ts';
import { batchGet, type Key, type PageQuery } from './query.ts';
import { indexKeys, type IndexName } from './table-definition.ts';
import { template, type EntityDeclaration } from './declaration.ts';
import type { TransactItem, TxWrite } from './transact.ts';
import { updateExpression, type UpdateParts } from './update.ts';

/**
 * The declaration layer of the single table (docs/decisions.md "Data layer"):
 * each entity is declared once — key templates, the index slots it occupies,
 * its attribute mapping — and every read and write of its items is built from
 * that declaration. keys.ts holds the templates of every entity (the catalog
 * that docs/data-model.md is generated from); a module's repository binds its
 * entities to their domain records with `bindEntity`.
 *
 * A template is a string with `{field}` or `{field:format}` placeholders, read
 * from the record (or from the values a key or query is given). An index slot
 * whose placeholders are not all present on a record is left off the item:
 * sparse indexes fall out of the declaration.
 */

/** A condition on the item a write addresses, and the domain error it means when it fails. */
export interface Condition {
  expr: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
  error?: () => Error;
}

export const conditions = {
  absent: (error?: () => Error): Condition => ({ expr: 'attribute_not_exists(pk)', error }),
  present: (error?: () => Error): Condition => ({ expr: 'attribute_exists(pk)', error }),
  /** Optimistic lock: the item still has the version that was read. */
  version: (attr: string, expected: number, error?: () => Error): Condition => ({ expr: '#ver = :ver', names: { '#ver': attr }, values: { ':ver': expected }, error }),
};

/** Values a key or query is built from: a record, or just its key fields. */
type Values = object;

export interface Mapping<R> {
  /** Domain fields stored as attributes of the same name (read back as null when absent). */
  fields: readonly (keyof R & string)[];
  /** Domain fields stored under another attribute name (`type` names the item kind throughout the table). */
  renames?: Partial<Record<keyof R & string, string>>;
  /** Values only keys are built from (e.g. a rank), never stored as attributes of their own. */
  keyValues?: (r: R) => Record<string, unknown>;
  /** Derived attributes stored with the item. */
  extra?: (r: R) => Record<string, unknown>;
  /** Fixes up a record read from an item (defaults for attributes older items lack). */
  normalize?: (r: R) => R;
}

export interface QueryOptions {
  forward?: boolean;
  /** Sort-key condition: a prefix (by default the sort key's part the given values fix, e.g. `TFOPT#<fieldId>#`) or a range. */
  skBeginsWith?: string;
  skBetween?: [string, string];
  skAfter?: string;
  skBefore?: string;
  filter?: { expr: string; names?: Record<string, string>; values?: Record<string, unknown> };
}

export interface Entity<R> {
  readonly declaration: EntityDeclaration;
  key(values: Values): Key;
  item(r: R): Record<string, unknown>;
  fromItem(item: Record<string, unknown>): R;
  get(values: Values, opts?: { consistent?: boolean; projection?: string[] }): Promise<R | null>;
  getMany(values: readonly Values[], opts?: { consistent?: boolean }): Promise<R[]>;
  put(r: R, condition?: Condition): TxWrite;
  /** Set the changed fields of `next` (and the index attributes they move) on the stored item. */
  update(current: R, next: R, condition?: Condition): TxWrite;
  /** An update of raw attributes (counters, states) built by the one update builder. */
  updateAttributes(values: Values, parts: UpdateParts, condition?: Condition): TxWrite;
  delete(values: Values, condition?: Condition): TxWrite;
  check(values: Values, condition: Condition): TxWrite;
  /** The Query of a named access pattern, for queryPage / numberedPage / queryAll. */
  query(pattern: string, values: Values, opts?: QueryOptions): Omit<PageQuery, 'limit' | 'startKey'>;
}

const conditionParts = (c?: Condition) => (c ? { ConditionExpression: c.expr, names: c.names, values: c.values } : undefined);

function mergeExpressionInput(names?: Record<string, string>, values?: Record<string, unknown>) {
  return {
    ...(names && Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(values && Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}

/** Bind an entity's declaration to its domain record: every read and write of its items goes through the result. */
export function bindEntity<R extends object>(d: EntityDeclaration, m: Mapping<R>): Entity<R> {
  const pkT = template(d.key.pk);
  const skT = template(d.key.sk);
  const indexes = Object.entries(d.indexes ?? {}).map(([name, i]) => ({ name, ...i, pkT: template(i.pk), skT: template(i.sk) }));
  const gsiSlots = indexes.filter((i) => i.slot !== 'table');
  const renames = (m.renames ?? {}) as Record<string, string>;
  const keyFieldsOf = new Set(gsiSlots.flatMap((i) => [...i.pkT.fields, ...i.skT.fields]));

  const key = (values: Values): Key => {
    const pk = pkT.build(values);
    const sk = skT.build(values);
    if (pk === undefined || sk === undefined) throw new Error(`Key of ${d.type} needs ${[...pkT.fields, ...skT.fields].join(', ')}`);
    return { pk, sk };
  };
  const keyValues = (r: R): Values => (m.keyValues ? { ...r, ...m.keyValues(r) } : r);
  const indexAttributes = (r: R) => {
    const v = keyValues(r);
    const out: Record<string, string> = {};
    for (const i of gsiSlots) {
      const pk = i.pkT.build(v);
      const sk = i.skT.build(v);
      if (pk === undefined || sk === undefined) continue;
      const names = indexKeys(i.slot as IndexName);
      out[names.partitionKey] = pk;
      out[names.sortKey] = sk;
    }
    return out;
  };
  const attributes = (r: R) => {
    const out: Record<string, unknown> = {};
    for (const f of m.fields) out[renames[f] ?? f] = (r as Record<string, unknown>)[f];
    return out;
  };
  const item = (r: R) => ({ ...key(r), type: d.type, ...attributes(r), ...indexAttributes(r), ...m.extra?.(r) });
  const fromItem = (i: Record<string, unknown>): R => {
    const r: Record<string, unknown> = {};
    for (const f of m.fields) r[f] = i[renames[f] ?? f] ?? null;
    return m.normalize ? m.normalize(r as R) : (r as R);
  };
  const errorOf = (c?: Condition) => c?.error;
  // Items the incremental export reads by `updatedAt` carry their place in its index (`stampedAt`) to the write,
  // and a way to move it to a later instant if the write is sent late (transact.ts, docs/history.md).
  // The index's time field is the first placeholder of its sort key (`{updatedAt}#{id}`; users: `{changedAt}#{id}`).
  const changes = indexes.find((i) => i.name === 'changes' && i.slot !== 'table');
  const changesSk = changes ? indexKeys(changes.slot as IndexName).sortKey : undefined;
  const timeField = changes?.skT.fields[0];
  const placeOf = (r: R) => (timeField ? (keyValues(r) as Record<string, unknown>)[timeField] : undefined);
  const stampOf = (r: R, write: (changesSkValue?: string) => TransactItem): Pick<TxWrite, 'stampedAt' | 'restamp' | 'move'> => {
    const at = placeOf(r);
    if (typeof at !== 'string' || !changes || !changesSk) return {};
    const placeAt = (t: string) => changes.skT.build({ ...keyValues(r), [timeField!]: t });
    // Moves the item's entry from where this write put it (`from`) to `to`, unless a later write moved it already.
    const moveFrom =
      (from: string) =>
      (to: string): TransactItem => ({
        Update: updateParts(r, { set: { [changesSk]: placeAt(to) } }, { expr: `#chg = :chgFrom`, names: { '#chg': changesSk }, values: { ':chgFrom': placeAt(from) } }),
      });
    const restamp = (now: string): TxWrite => ({ item: write(placeAt(now)), stampedAt: Date.parse(now), restamp, move: moveFrom(now) });
    return { stampedAt: Date.parse(at), restamp, move: moveFrom(at) };
  };

  const updateParts = (values: Values, parts: UpdateParts, condition?: Condition) => {
    const u = updateExpression(parts, conditionParts(condition));
    return { TableName: tableName(), Key: key(values), ...u };
  };

  return {
    declaration: d,
    key,
    item,
    fromItem,
    async get(values, opts = {}) {
      const proj = opts.projection;
      const out = await ddb.send(
        new GetCommand({
          TableName: tableName(),
          Key: key(values),
          ...(opts.consistent ? { ConsistentRead: true } : {}),
          ...(proj ? { ProjectionExpression: proj.map((_, n) => `#p${n}`).join(', '), ExpressionAttributeNames: Object.fromEntries(proj.map((p, n) => [`#p${n}`, p])) } : {}),
        }),
      );
      return out.Item ? fromItem(out.Item) : null;
    },
    async getMany(list, opts = {}) {
      const seen = new Set<string>();
      const unique: Key[] = [];
      for (const v of list) {
        const k = key(v);
        const id = `${k.pk}\u0000${k.sk}`;
        if (seen.has(id)) continue;
        seen.add(id);
        unique.push(k);
      }
      // BatchGetItem takes 100 keys: the chunks are read side by side, one round trip in all.
      const chunks = Array.from({ length: Math.ceil(unique.length / 100) }, (_, i) => unique.slice(i * 100, i * 100 + 100));
      return (await Promise.all(chunks.map((c) => batchGet(c, opts)))).flat().map(fromItem);
    },
    put(r, condition) {
      const c = conditionParts(condition);
      const write = (changesSkValue?: string): TransactItem => ({
        Put: {
          TableName: tableName(),
          Item: changesSkValue === undefined ? item(r) : { ...item(r), [changesSk!]: changesSkValue },
          ...(c ? { ConditionExpression: c.ConditionExpression, ...mergeExpressionInput(c.names, c.values) } : {}),
        },
      });
      const w: TxWrite = { item: write(), onConditionFailed: errorOf(condition), ...stampOf(r, write) };
      return w;
    },
    update(current, next, condition) {
      const set: Record<string, unknown> = {};
      const remove: string[] = [];
      for (const f of m.fields) {
        const a = (current as Record<string, unknown>)[f];
        const b = (next as Record<string, unknown>)[f];
        if (a === b || (typeof b === 'object' && b !== null && JSON.stringify(a) === JSON.stringify(b))) continue;
        if (b === undefined) remove.push(renames[f] ?? f);
        else set[renames[f] ?? f] = b;
      }
      const touchesKeys = Boolean(m.keyValues) || [...keyFieldsOf].some((f) => (current as Record<string, unknown>)[f] !== (next as Record<string, unknown>)[f]);
      if (touchesKeys) {
        // All of next's index attributes, not only the moved ones: an item written before a slot existed gains it.
        const after = indexAttributes(next);
        Object.assign(set, after);
        for (const k of Object.keys(indexAttributes(current))) if (!(k in after)) remove.push(k);
      }
      if (m.extra && (Object.keys(set).length || remove.length)) Object.assign(set, m.extra(next));
      const moved = placeOf(current) !== placeOf(next);
      const write = (changesSkValue?: string): TransactItem => ({
        Update: updateParts(current, { set: changesSkValue === undefined ? set : { ...set, [changesSk!]: changesSkValue }, remove }, condition),
      });
      return { item: write(), onConditionFailed: errorOf(condition), ...(moved ? stampOf(next, write) : {}) };
    },
    updateAttributes(values, parts, condition) {
      return { item: { Update: updateParts(values, parts, condition) }, onConditionFailed: errorOf(condition) };
    },
    delete(values, condition) {
      const c = conditionParts(condition);
      return {
        item: { Delete: { TableName: tableName(), Key: key(values), ...(c ? { ConditionExpression: c.ConditionExpression, ...mergeExpressionInput(c.names, c.values) } : {}) } },
        onConditionFailed: errorOf(condition),
      };
    },
    check(values, condition) {
      return {
        item: { ConditionCheck: { TableName: tableName(), Key: key(values), ConditionExpression: condition.expr, ...mergeExpressionInput(condition.names, condition.values) } },
        onConditionFailed: errorOf(condition),
      };
    },
    query(pattern, values, opts = {}) {
      const i = indexes.find((x) => x.name === pattern);
      if (!i) throw new Error(`Entity ${d.type} has no access pattern ${pattern}`);
      const pkName = i.slot === 'table' ? 'pk' : indexKeys(i.slot).partitionKey;
      const skName = i.slot === 'table' ? 'sk' : indexKeys(i.slot).sortKey;
      const pk = i.pkT.build(values);
      if (pk === undefined) throw new Error(`Pattern ${d.type}.${pattern} needs ${i.pkT.fields.join(', ')}`);
      const names: Record<string, string> = { ...opts.filter?.names };
      const vals: Record<string, unknown> = { ...opts.filter?.values, ':qpk': pk };
      let cond = `${pkName} = :qpk`;
      if (opts.skBetween) {
        cond += ` AND ${skName} BETWEEN :qlo AND :qhi`;
        [vals[':qlo'], vals[':qhi']] = opts.skBetween;
      } else if (opts.skAfter !== undefined) {
        cond += ` AND ${skName} > :qsk`;
        vals[':qsk'] = opts.skAfter;
      } else if (opts.skBefore !== undefined) {
        cond += ` AND ${skName} < :qsk`;
        vals[':qsk'] = opts.skBefore;
      } else {
        const prefix = opts.skBeginsWith ?? i.skT.prefixOf(values);
        if (prefix) {
          cond += ` AND begins_with(${skName}, :qsk)`;
          vals[':qsk'] = prefix;
        }
      }
      return { ...(i.slot === 'table' ? {} : { index: i.slot }), keyCondition: cond, filter: opts.filter?.expr, names, values: vals, forward: opts.forward ?? true };
    },
  };
}

export { declareEntity, template } from './declaration.ts';
export type { EntityDeclaration, IndexDeclaration, Slot } from './declaration.ts';
