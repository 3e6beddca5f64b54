import type { FieldIssue } from '../domain/errors.ts';
import type { FieldRecord } from '../ticket-fields/api.ts';
import { checkValue } from '../ticket-fields/values.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';
import type { TicketRecord } from '../tickets/service.ts';
import type { Condition, ConditionOperator, StoredCondition } from './model.ts';

/**
 * The conditions of decisions §21 as pure functions: which operators fit a
 * field, whether a value fits both (each issue names the condition, e.g.
 * `conditions.all.0.value`), and whether a ticket matches. The count consumer,
 * the background count and a view's ticket list all judge with `matchesView`.
 */

const ENUMS: Record<string, readonly string[]> = { status: TICKET_STATUSES, priority: TICKET_PRIORITIES, type: TICKET_TYPES };
const EQUALITY: readonly ConditionOperator[] = ['is', 'isNot', 'in', 'notIn'];
const ORDER: readonly ConditionOperator[] = ['lessThan', 'greaterThan'];
const MAX_LIST = 50;

const idOrNull = (v: unknown) => v === null || (typeof v === 'string' && v.length > 0 && v.length <= 64);
const emailOrNull = (v: unknown) => v === null || (typeof v === 'string' && v.length > 0 && v.length <= 254);
const tag = (v: unknown) => typeof v === 'string' && /^[^\s,]+$/u.test(v) && [...v].length <= 64;
const hours = (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1_000_000;

/** Operators each kind of field takes. */
function operatorsOf(field: string, custom?: FieldRecord): readonly ConditionOperator[] {
  if (field === 'tags') return ['includes', 'excludes'];
  if (field === 'hoursSinceCreated' || field === 'hoursSinceUpdated') return ORDER;
  if (!custom) return EQUALITY;
  if (custom.fieldType === 'multiselect') return ['includes', 'excludes'];
  if (custom.fieldType === 'number' || custom.fieldType === 'decimal' || custom.fieldType === 'date') return [...EQUALITY, ...ORDER];
  return EQUALITY;
}

/** Whether one value fits the field (null is "no value" for the fields that may lack one). */
function valueFits(field: string, v: unknown, custom?: FieldRecord): boolean {
  if (ENUMS[field]) return typeof v === 'string' && ENUMS[field].includes(v);
  if (field === 'assigneeId' || field === 'groupId') return idOrNull(v);
  if (field === 'requesterEmail') return emailOrNull(v);
  if (field === 'tags') return tag(v);
  if (field === 'hoursSinceCreated' || field === 'hoursSinceUpdated') return hours(v);
  if (!custom) return false;
  if (v === null) return true;
  if (custom.fieldType === 'multiselect') return checkValue(custom, [v]) === null;
  return checkValue(custom, v) === null;
}

/**
 * Check a view's conditions against decisions §21; custom fields are looked up
 * by key (`fieldsByKey`). Answers the issues and the conditions as stored.
 */
export function checkConditions(
  conditions: { all: Condition[]; any: Condition[] },
  fieldsByKey: ReadonlyMap<string, FieldRecord>,
): { issues: FieldIssue[]; stored: { all: StoredCondition[]; any: StoredCondition[] } } {
  const issues: FieldIssue[] = [];
  const store = (list: Condition[], name: 'all' | 'any') =>
    list.map((c, i): StoredCondition => {
      const at = `conditions.${name}.${i}`;
      const key = c.field.startsWith('customFields.') ? c.field.slice('customFields.'.length) : null;
      const custom = key === null ? undefined : fieldsByKey.get(key);
      if (key !== null && !custom) {
        issues.push({ field: `${at}.field`, message: `no custom field has the key ${key}` });
        return c;
      }
      const ops = operatorsOf(c.field, custom);
      if (!ops.includes(c.operator)) {
        issues.push({ field: `${at}.operator`, message: `${c.field} takes ${ops.join(', ')}` });
        return c;
      }
      const list = c.operator === 'in' || c.operator === 'notIn';
      const tags = c.field === 'tags' || custom?.fieldType === 'multiselect';
      let ok: boolean;
      if (list) ok = Array.isArray(c.value) && c.value.length > 0 && c.value.length <= MAX_LIST && c.value.every((v) => valueFits(c.field, v, custom));
      else if (tags)
        ok =
          (Array.isArray(c.value) ? c.value.length > 0 && c.value.length <= MAX_LIST && c.value.every((v) => valueFits(c.field, v, custom)) : valueFits(c.field, c.value, custom)) && c.value !== null;
      else if (ORDER.includes(c.operator)) ok = c.value !== null && valueFits(c.field, c.value, custom);
      else ok = valueFits(c.field, c.value, custom);
      if (!ok) issues.push({ field: `${at}.value`, message: describe(c, custom) });
      return custom ? { ...c, fieldId: custom.id } : c;
    });
  return { issues, stored: { all: store(conditions.all, 'all'), any: store(conditions.any, 'any') } };
}

function describe(c: Condition, custom?: FieldRecord): string {
  const one = ENUMS[c.field]
    ? `one of ${ENUMS[c.field].join(', ')}`
    : c.field === 'assigneeId' || c.field === 'groupId'
      ? 'an id or null'
      : c.field === 'requesterEmail'
        ? 'an email or null'
        : c.field === 'tags'
          ? 'a tag (1-64 characters, no whitespace or commas)'
          : c.field.startsWith('hoursSince')
            ? 'a number of hours (0 or more)'
            : `a value of the ${custom?.fieldType} field ${custom?.fieldKey}, or null`;
  if (c.operator === 'in' || c.operator === 'notIn') return `must be an array of 1-${MAX_LIST} values, each ${one}`;
  if (c.operator === 'includes' || c.operator === 'excludes') return `must be ${one} or an array of 1-${MAX_LIST} of them`;
  return `must be ${one}`;
}

/** A view's conditions use the clock (hoursSince*): their count is settled by the scheduled pass too. */
export const usesTime = (c: { all: Condition[]; any: Condition[] }) => [...c.all, ...c.any].some((x) => x.field.startsWith('hoursSince'));

const same = (a: unknown, b: unknown) => (typeof a === 'string' && typeof b === 'string' ? a.toLowerCase() === b.toLowerCase() : JSON.stringify(a ?? null) === JSON.stringify(b ?? null));
const compare = (a: unknown, b: unknown): number | null => {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return null;
};

function valueOf(t: TicketRecord, c: StoredCondition, now: number): unknown {
  switch (c.field) {
    case 'hoursSinceCreated':
      return (now - Date.parse(t.createdAt)) / 3_600_000;
    case 'hoursSinceUpdated':
      return (now - Date.parse(t.updatedAt)) / 3_600_000;
    default:
      if (c.fieldId !== undefined) return t.customFields.find((f) => f.id === c.fieldId)?.value ?? null;
      return (t as unknown as Record<string, unknown>)[c.field] ?? null;
  }
}

/** Whether one condition holds for a ticket at `now` (epoch ms). */
export function holds(t: TicketRecord, c: StoredCondition, now: number): boolean {
  const v = valueOf(t, c, now);
  const values = Array.isArray(c.value) ? (c.value as unknown[]) : [c.value];
  switch (c.operator) {
    case 'is':
      return same(v, c.value);
    case 'isNot':
      return !same(v, c.value);
    case 'in':
      return values.some((x) => same(v, x));
    case 'notIn':
      return !values.some((x) => same(v, x));
    case 'includes':
      return Array.isArray(v) && values.some((x) => v.some((y) => same(y, x)));
    case 'excludes':
      return !(Array.isArray(v) && values.some((x) => v.some((y) => same(y, x))));
    case 'lessThan': {
      const d = compare(v, c.value);
      return d !== null && d < 0;
    }
    case 'greaterThan': {
      const d = compare(v, c.value);
      return d !== null && d > 0;
    }
  }
}

/** decisions §21: every `all` condition holds and, if `any` is non-empty, at least one of `any`. */
export const matchesView = (t: TicketRecord, c: { all: StoredCondition[]; any: StoredCondition[] }, now: number): boolean =>
  c.all.every((x) => holds(t, x, now)) && (!c.any.length || c.any.some((x) => holds(t, x, now)));
