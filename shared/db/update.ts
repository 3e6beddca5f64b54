/**
 * The one builder of UpdateExpressions: every update of the table (an
 * entity's changed fields, counters, state moves) is described as parts and
 * turned into an expression here, with placeholders for every name and value
 * (attribute names such as `status`, `type` or `count` are reserved words).
 */
export interface UpdateParts {
  /** Attributes to set; an `if_not_exists` default is expressed as `{ ifNotExists: value }`. */
  set?: Record<string, unknown>;
  /** Numeric attributes to add to (created at the delta when absent), or values added to a set. */
  add?: Record<string, unknown>;
  /** Values deleted from a set attribute. */
  deleteFromSet?: Record<string, unknown>;
  remove?: readonly string[];
}

export interface ConditionInput {
  ConditionExpression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

export interface UpdateInput {
  UpdateExpression: string;
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

const IF_NOT_EXISTS = Symbol('ifNotExists');
const PLUS = Symbol('plus');
/** An `if_not_exists(attr, value)` operand for `set`; with `plus`, `if_not_exists(attr, value) + plus` (a count that starts from `value` when absent). */
export const ifNotExists = (value: unknown, plus?: number) => ({ [IF_NOT_EXISTS]: value, ...(plus !== undefined ? { [PLUS]: plus } : {}) });

export function updateExpression(parts: UpdateParts, condition?: ConditionInput): UpdateInput {
  const names: Record<string, string> = { ...condition?.names };
  const values: Record<string, unknown> = { ...condition?.values };
  let n = 0;
  const name = (attr: string) => {
    const placeholder = `#u${n}`;
    names[placeholder] = attr;
    return placeholder;
  };
  const value = (v: unknown) => {
    const placeholder = `:u${n++}`;
    values[placeholder] = v;
    return placeholder;
  };
  const clauses: string[] = [];
  const set = Object.entries(parts.set ?? {}).map(([k, v]) => {
    const attr = name(k);
    if (v && typeof v === 'object' && IF_NOT_EXISTS in v) {
      const operand = v as Record<symbol, unknown>;
      const start = `if_not_exists(${attr}, ${value(operand[IF_NOT_EXISTS])})`;
      return `${attr} = ${PLUS in operand ? `${start} + ${value(operand[PLUS])}` : start}`;
    }
    return `${attr} = ${value(v)}`;
  });
  if (set.length) clauses.push(`SET ${set.join(', ')}`);
  const add = Object.entries(parts.add ?? {}).map(([k, v]) => `${name(k)} ${value(v)}`);
  if (add.length) clauses.push(`ADD ${add.join(', ')}`);
  const del = Object.entries(parts.deleteFromSet ?? {}).map(([k, v]) => `${name(k)} ${value(v)}`);
  if (del.length) clauses.push(`DELETE ${del.join(', ')}`);
  const remove = (parts.remove ?? []).map((k) => {
    const attr = name(k);
    n++;
    return attr;
  });
  if (remove.length) clauses.push(`REMOVE ${remove.join(', ')}`);
  if (!clauses.length) throw new Error('An update must change something');
  return {
    UpdateExpression: clauses.join(' '),
    ...(condition ? { ConditionExpression: condition.ConditionExpression } : {}),
    ...(Object.keys(names).length ? { ExpressionAttributeNames: names } : {}),
    ...(Object.keys(values).length ? { ExpressionAttributeValues: values } : {}),
  };
}
