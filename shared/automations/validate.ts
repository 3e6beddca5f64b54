/**
 * Field-by-field checks of an automation rule (decisions §8): every field
 * known, every operator fitting its field's type, every value of the field's
 * type. Pure: the caller passes the account's custom fields and their options.
 */
import type { FieldIssue } from '../domain/errors.ts';
import type { FieldRecord } from '../ticket-fields/api.ts';
import { checkValue } from '../ticket-fields/values.ts';
import { customFieldId } from './engine.ts';
import { ACTION_FIELDS, CONDITION_FIELDS } from './limits.ts';
import type { ConditionOp, Rule } from './model.ts';
import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from '../ticket-fields/system-values.ts';

type Kind = 'enum' | 'id' | 'text' | 'number' | 'time' | 'date' | 'boolean' | 'option' | 'set';

const TEXT_OPS: ConditionOp[] = ['equals', 'notequal', 'contains', 'notcontain', 'startswith', 'notstartwith', 'endswith', 'notendwith'];
const ONE_OF_OPS: ConditionOp[] = ['equals', 'notequal', 'containsoneormoreof', 'containsnoneof'];
const ORDER_OPS: ConditionOp[] = ['equals', 'notequal', 'greaterthan', 'greaterthanorequalto', 'lessthan', 'lessthanorequalto'];
const LIST_OPS: ConditionOp[] = ['containsoneormoreof', 'containsnoneof'];

/** Which operators fit which kind of field. */
export const OPS_BY_KIND: Record<Kind, ConditionOp[]> = {
  text: TEXT_OPS,
  enum: ONE_OF_OPS,
  id: ONE_OF_OPS,
  option: ONE_OF_OPS,
  number: ORDER_OPS,
  time: ORDER_OPS,
  date: ORDER_OPS,
  boolean: ['equals', 'notequal'],
  set: LIST_OPS,
};

const ENUMS: Record<string, readonly string[]> = { status: TICKET_STATUSES, priority: TICKET_PRIORITIES, type: TICKET_TYPES };
const SYSTEM_KINDS: Record<(typeof CONDITION_FIELDS)[number], Kind> = {
  status: 'enum',
  priority: 'enum',
  type: 'enum',
  subject: 'text',
  requesterEmail: 'text',
  tags: 'set',
  assigneeId: 'id',
  groupId: 'id',
  hoursSinceCreated: 'time',
  hoursSinceUpdated: 'time',
  hoursSinceResolved: 'time',
};
const CUSTOM_KINDS: Record<FieldRecord['fieldType'], Kind> = {
  text: 'text',
  textarea: 'text',
  regex: 'text',
  number: 'number',
  decimal: 'number',
  date: 'date',
  checkbox: 'boolean',
  dropdown: 'option',
  multiselect: 'set',
};

const TAG = /^[^\s,]{1,64}$/u;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const isTag = (v: unknown) => typeof v === 'string' && TAG.test(v);
const describeList = (l: readonly string[]) => l.join(', ');

export interface RuleContext {
  /** The account's custom fields by id. */
  fields: Map<string, FieldRecord>;
  /** Option values of its dropdown and multiselect fields that exist, by field id (at least those the rule names). */
  options: Map<string, Set<string>>;
}

/** String values a rule gives each custom field (so the caller looks up only those options). */
export function referencedValues(rule: Rule): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const x of [...(rule.all ?? []), ...(rule.any ?? []), ...rule.actions]) {
    const id = customFieldId(x.field);
    if (id === null) continue;
    const values = out.get(id) ?? new Set<string>();
    for (const v of Array.isArray(x.value) ? x.value : [x.value]) if (typeof v === 'string') values.add(v);
    out.set(id, values);
  }
  return out;
}

interface Target {
  kind: Kind;
  /** Allowed values (enums, option values), or null when any value of the kind goes. */
  allowed: readonly string[] | null;
  label: string;
}

function conditionTarget(field: string, ctx: RuleContext): Target | string {
  const custom = customFieldId(field);
  if (custom !== null) {
    const f = ctx.fields.get(custom);
    if (!f) return `no custom field ${custom} in this account`;
    const kind = CUSTOM_KINDS[f.fieldType];
    return { kind, allowed: kind === 'option' || (kind === 'set' && f.fieldType === 'multiselect') ? [...(ctx.options.get(custom) ?? [])] : null, label: f.fieldKey };
  }
  if (!(CONDITION_FIELDS as readonly string[]).includes(field)) return `unknown field; use one of ${describeList(CONDITION_FIELDS)} or customField:<id>`;
  const kind = SYSTEM_KINDS[field as (typeof CONDITION_FIELDS)[number]];
  return { kind, allowed: ENUMS[field] ?? null, label: field };
}

/** Why one scalar is not a value of the target, or null. */
function scalarProblem(t: Target, v: unknown): string | null {
  const allowed = (x: unknown) => t.allowed === null || (typeof x === 'string' && t.allowed.some((a) => a.toLowerCase() === x.toLowerCase()));
  switch (t.kind) {
    case 'enum':
      return typeof v === 'string' && allowed(v) ? null : `must be one of ${describeList(t.allowed ?? [])}`;
    case 'option':
      return typeof v === 'string' && allowed(v) ? null : `must be option values of ${t.label}`;
    case 'id':
      return typeof v === 'string' && v.length > 0 && v.length <= 64 ? null : 'must be an id (string)';
    case 'text':
      return typeof v === 'string' && v.length > 0 ? null : 'must be a non-empty string';
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? null : 'must be a number';
    case 'time':
      return Number.isSafeInteger(v) && (v as number) >= 0 ? null : 'must be a whole number of hours (0 or more)';
    case 'date':
      return typeof v === 'string' && DATE.test(v) ? null : 'must be a date YYYY-MM-DD';
    case 'boolean':
      return typeof v === 'boolean' ? null : 'must be true or false';
    case 'set':
      return t.allowed ? (typeof v === 'string' && allowed(v) ? null : `must be option values of ${t.label}`) : isTag(v) ? null : 'must be tags (1-64 characters, no spaces or commas)';
  }
}

function checkCondition(c: { field: string; op: ConditionOp; value: unknown }, at: string, ctx: RuleContext, issues: FieldIssue[]) {
  const target = conditionTarget(c.field, ctx);
  if (typeof target === 'string') {
    issues.push({ field: `${at}.field`, message: target });
    return;
  }
  const ops = OPS_BY_KIND[target.kind];
  if (!ops.includes(c.op)) {
    issues.push({ field: `${at}.op`, message: `${c.op} does not fit ${c.field}; use one of ${describeList(ops)}` });
    return;
  }
  const list = LIST_OPS.includes(c.op);
  if (list !== Array.isArray(c.value)) {
    issues.push({ field: `${at}.value`, message: list ? `${c.op} takes a non-empty array` : `${c.op} takes a single value, not an array` });
    return;
  }
  const values = Array.isArray(c.value) ? c.value : [c.value];
  // `equals null` / `notequal null`: "is not set", for fields that can be unset.
  if (!list && c.value === null) {
    if (c.op === 'equals' || c.op === 'notequal') {
      if (target.kind === 'enum' || target.kind === 'time' || target.kind === 'boolean') issues.push({ field: `${at}.value`, message: `${c.field} is always set; null does not fit` });
    } else issues.push({ field: `${at}.value`, message: `${c.op} needs a value` });
    return;
  }
  for (const v of values) {
    const problem = scalarProblem(target, v);
    if (problem) {
      issues.push({ field: `${at}.value`, message: problem });
      return;
    }
  }
}

function checkAction(a: { field: string; value: unknown }, at: string, ctx: RuleContext, issues: FieldIssue[]) {
  const custom = customFieldId(a.field);
  if (custom !== null) {
    const f = ctx.fields.get(custom);
    if (!f) return issues.push({ field: `${at}.field`, message: `no custom field ${custom} in this account` });
    if (a.value === null) {
      if (f.requiredForAgents) issues.push({ field: `${at}.value`, message: `${f.fieldKey} is required and cannot be cleared` });
      return;
    }
    if (!f.active) return issues.push({ field: `${at}.field`, message: `${f.fieldKey} is inactive and cannot take new values` });
    const problem = checkValue(f, a.value);
    if (problem) return issues.push({ field: `${at}.value`, message: `${f.fieldKey} ${problem}` });
    const options = ctx.options.get(custom);
    const values = f.fieldType === 'dropdown' ? [a.value] : f.fieldType === 'multiselect' ? (a.value as unknown[]) : [];
    const unknown = values.find((v) => !options?.has(v as string));
    if (unknown !== undefined) issues.push({ field: `${at}.value`, message: `"${String(unknown)}" is not an option of ${f.fieldKey}` });
    return;
  }
  switch (a.field) {
    case 'status':
    case 'priority':
    case 'type':
      if (typeof a.value !== 'string' || !ENUMS[a.field].includes(a.value)) issues.push({ field: `${at}.value`, message: `must be one of ${describeList(ENUMS[a.field])}` });
      return;
    case 'assigneeId':
    case 'groupId':
      if (a.value !== null && !(typeof a.value === 'string' && a.value.length > 0 && a.value.length <= 64)) issues.push({ field: `${at}.value`, message: 'must be an id (string) or null' });
      return;
    case 'addTags':
    case 'removeTags':
      if (!Array.isArray(a.value) || !a.value.length || !a.value.every(isTag))
        issues.push({ field: `${at}.value`, message: 'must be a non-empty array of tags (1-64 characters, no spaces or commas)' });
      return;
    default:
      issues.push({ field: `${at}.field`, message: `unknown action field; use one of ${describeList(ACTION_FIELDS)} or customField:<id>` });
  }
}

/** Every problem of a rule, each naming its path (`rule.all.2.op`). */
export function validateRule(rule: Rule, ctx: RuleContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!(rule.all?.length || rule.any?.length)) issues.push({ field: 'rule', message: 'needs at least one condition in all or any' });
  for (const group of ['all', 'any'] as const) {
    (rule[group] ?? []).forEach((c, i) => {
      checkCondition(c, `rule.${group}.${i}`, ctx, issues);
    });
  }
  const seen = new Set<string>();
  rule.actions.forEach((a, i) => {
    if (seen.has(a.field)) issues.push({ field: `rule.actions.${i}.field`, message: `${a.field} appears in more than one action` });
    else {
      seen.add(a.field);
      checkAction(a, `rule.actions.${i}`, ctx, issues);
    }
  });
  return issues;
}
