/**
 * The automation engine: pure functions, no I/O (decisions §8; docs/automations.md).
 *
 * Comparison rules, the same for every field:
 * - strings compare case-insensitively (subjects, emails, tags, ids, option values);
 * - a value that is not set (null, absent, an empty tag list) fails every positive
 *   operator and passes every negative one (notequal, notcontain, notstartwith,
 *   notendwith, containsnoneof); `equals null` holds exactly when it is not set;
 * - an unchecked checkbox counts as false;
 * - time fields are whole hours elapsed (floor), against an injected clock;
 *   hoursSinceResolved counts from the last change of a resolved ticket and is
 *   not set on any other status.
 */
import type { Action, Condition, ConditionOp, Rule } from './model.ts';
import { CUSTOM_FIELD_PREFIX } from './limits.ts';

/** What the engine reads of a ticket; the dry run may leave any of it out. */
export interface EngineTicket {
  subject?: string;
  status?: string;
  priority?: string;
  type?: string;
  tags?: string[];
  assigneeId?: string | null;
  requesterEmail?: string | null;
  groupId?: string | null;
  customFields?: { id: string; value: unknown }[];
  createdAt?: string;
  updatedAt?: string;
}

/** The fields of an UpdateTicketInput an automation can set. */
export interface TicketChanges {
  status?: string;
  priority?: string;
  type?: string;
  assigneeId?: string | null;
  groupId?: string | null;
  tags?: string[];
  customFields?: { id: string; value: unknown }[];
}

export interface EngineAutomation {
  id: string;
  isActive: boolean;
  rule: Rule;
}

const HOUR_MS = 3_600_000;
/** Tags per ticket (decisions §6): an addTags action stops at the cap. */
export const MAX_TAGS = 100;

const hoursSince = (iso: string | undefined, now: Date): number | null => {
  if (!iso) return null;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? null : Math.max(0, Math.floor((now.getTime() - t) / HOUR_MS));
};

export const customFieldId = (field: string): string | null => (field.startsWith(CUSTOM_FIELD_PREFIX) ? field.slice(CUSTOM_FIELD_PREFIX.length) : null);

/** The ticket's value of a condition field, or null when it is not set. */
export function actualValue(field: string, t: EngineTicket, now: Date): unknown {
  const custom = customFieldId(field);
  if (custom !== null) return t.customFields?.find((c) => c.id === custom)?.value ?? null;
  switch (field) {
    case 'tags':
      return t.tags ?? [];
    case 'hoursSinceCreated':
      return hoursSince(t.createdAt, now);
    case 'hoursSinceUpdated':
      return hoursSince(t.updatedAt, now);
    case 'hoursSinceResolved':
      return t.status === 'resolved' ? hoursSince(t.updatedAt, now) : null;
    default:
      return (t as Record<string, unknown>)[field] ?? null;
  }
}

const fold = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
const isUnset = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);

function equalsValue(actual: unknown, expected: unknown): boolean {
  if (expected === null) return isUnset(actual);
  if (typeof expected === 'boolean') return (actual ?? false) === expected;
  if (Array.isArray(actual)) {
    // A multi-valued field equals a scalar only when that is its single value.
    return actual.length === 1 && fold(actual[0]) === fold(expected);
  }
  return actual !== null && actual !== undefined && fold(actual) === fold(expected);
}

function compare(actual: unknown, expected: unknown): number | null {
  if (typeof expected === 'number' && typeof actual === 'number') return actual - expected;
  // Dates (YYYY-MM-DD) and other strings order as text.
  if (typeof expected === 'string' && typeof actual === 'string') return actual < expected ? -1 : actual > expected ? 1 : 0;
  return null;
}

function text(actual: unknown, expected: unknown, test: (a: string, e: string) => boolean): boolean {
  if (typeof actual !== 'string' || typeof expected !== 'string') return false;
  return test(actual.toLowerCase(), expected.toLowerCase());
}

function oneOf(actual: unknown, expected: unknown): boolean {
  const wanted = new Set((Array.isArray(expected) ? expected : [expected]).map(fold));
  const have = Array.isArray(actual) ? actual : isUnset(actual) ? [] : [actual];
  return have.some((v) => wanted.has(fold(v)));
}

/** Does `actual op expected` hold? */
export function holds(op: ConditionOp, actual: unknown, expected: unknown): boolean {
  switch (op) {
    case 'equals':
      return equalsValue(actual, expected);
    case 'notequal':
      return !equalsValue(actual, expected);
    case 'greaterthan':
      return (compare(actual, expected) ?? -Infinity) > 0;
    case 'greaterthanorequalto':
      return (compare(actual, expected) ?? -Infinity) >= 0;
    case 'lessthan':
      return (compare(actual, expected) ?? Infinity) < 0;
    case 'lessthanorequalto':
      return (compare(actual, expected) ?? Infinity) <= 0;
    case 'contains':
      return text(actual, expected, (a, e) => a.includes(e));
    case 'notcontain':
      return !text(actual, expected, (a, e) => a.includes(e));
    case 'startswith':
      return text(actual, expected, (a, e) => a.startsWith(e));
    case 'notstartwith':
      return !text(actual, expected, (a, e) => a.startsWith(e));
    case 'endswith':
      return text(actual, expected, (a, e) => a.endsWith(e));
    case 'notendwith':
      return !text(actual, expected, (a, e) => a.endsWith(e));
    case 'containsoneormoreof':
      return oneOf(actual, expected);
    case 'containsnoneof':
      return !oneOf(actual, expected);
  }
}

export interface ConditionResult {
  group: 'all' | 'any';
  index: number;
  field: string;
  op: ConditionOp;
  value: unknown;
  actual: unknown;
  held: boolean;
}

/** Every condition of a rule with the ticket's value and whether it held, and whether the rule as a whole holds. */
export function explainRule(rule: Rule, t: EngineTicket, now: Date): { matched: boolean; conditions: ConditionResult[] } {
  const check =
    (group: 'all' | 'any') =>
    (c: Condition, index: number): ConditionResult => {
      const actual = actualValue(c.field, t, now);
      return { group, index, field: c.field, op: c.op, value: c.value, actual, held: holds(c.op, actual, c.value) };
    };
  const all = (rule.all ?? []).map(check('all'));
  const any = (rule.any ?? []).map(check('any'));
  const matched = all.every((c) => c.held) && (any.length === 0 || any.some((c) => c.held));
  return { matched, conditions: [...all, ...any] };
}

/** Does the rule hold? Stops at the first condition that decides it (evaluation on events needs no explanation). */
export function ruleHolds(rule: Rule, t: EngineTicket, now: Date): boolean {
  const held = (c: Condition) => holds(c.op, actualValue(c.field, t, now), c.value);
  const any = rule.any ?? [];
  return (rule.all ?? []).every(held) && (any.length === 0 || any.some(held));
}

/** The automation that applies: the first active one (in the given order) whose rule holds. */
export function firstMatch<A extends EngineAutomation>(automations: readonly A[], t: EngineTicket, now: Date): A | null {
  return automations.find((a) => a.isActive && ruleHolds(a.rule, t, now)) ?? null;
}

export const isTimeCondition = (c: Condition) => c.field.startsWith('hoursSince');

/** A time-based rule: the hourly job evaluates it. */
export const isTimeRule = (rule: Rule) => [...(rule.all ?? []), ...(rule.any ?? [])].some(isTimeCondition);

export interface Change {
  field: string;
  from: unknown;
  to: unknown;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * The update a rule's actions make to a ticket: only what differs from the
 * ticket as it is (so an action that changes nothing writes nothing), and the
 * same as from -> to pairs for people.
 */
export function planActions(actions: readonly Action[], t: EngineTicket): { input: TicketChanges; changes: Change[] } {
  const input: TicketChanges = {};
  const changes: Change[] = [];
  let tags = [...(t.tags ?? [])];
  const customFields: { id: string; value: unknown }[] = [];
  for (const a of actions) {
    const custom = customFieldId(a.field);
    if (custom !== null) {
      const from = t.customFields?.find((c) => c.id === custom)?.value ?? null;
      if (!same(from, a.value)) {
        customFields.push({ id: custom, value: a.value });
        changes.push({ field: a.field, from, to: a.value });
      }
      continue;
    }
    switch (a.field) {
      case 'addTags':
        for (const tag of a.value as string[]) if (tags.length < MAX_TAGS && !tags.some((x) => x.toLowerCase() === tag.toLowerCase())) tags.push(tag);
        break;
      case 'removeTags': {
        const drop = new Set((a.value as string[]).map((x) => x.toLowerCase()));
        tags = tags.filter((x) => !drop.has(x.toLowerCase()));
        break;
      }
      default: {
        const field = a.field as 'status' | 'priority' | 'type' | 'assigneeId' | 'groupId';
        const from = t[field] ?? null;
        if (!same(from, a.value)) {
          (input as Record<string, unknown>)[field] = a.value;
          changes.push({ field, from, to: a.value });
        }
      }
    }
  }
  if (!same(tags, t.tags ?? [])) {
    input.tags = tags;
    changes.push({ field: 'tags', from: t.tags ?? [], to: tags });
  }
  if (customFields.length) input.customFields = customFields;
  return { input, changes };
}
