import type { FieldIssue } from '../domain/errors.ts';
import { OPTION_VALUE_MAX } from './limits.ts';
import { loadPatterns, patternTest } from './pattern.ts';
import type { FieldRecord } from './repository.ts';

export interface CustomFieldValue {
  id: string;
  value: unknown;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const validDate = (s: string) => DATE.test(s) && !Number.isNaN(Date.parse(`${s}T00:00:00Z`)) && new Date(`${s}T00:00:00Z`).toISOString().startsWith(s);

/**
 * Check one value against its field's type (decisions §6). Dropdown and
 * multiselect values are checked against existing options by the caller,
 * which has to look them up anyway to count their use.
 */
export function checkValue(field: FieldRecord, value: unknown): string | null {
  switch (field.fieldType) {
    case 'text':
    case 'textarea':
      return typeof value === 'string' && value.length <= 10_000 ? null : 'must be a string (max 10000 characters)';
    case 'number':
      return Number.isSafeInteger(value) ? null : 'must be an integer';
    case 'decimal':
      // DynamoDB numbers stop at 1e125; a decimal field is for business quantities, so cap at 1e15.
      return typeof value === 'number' && Number.isFinite(value) && Math.abs(value) <= 1e15 ? null : 'must be a number (at most 1e15 in magnitude)';
    case 'checkbox':
      return typeof value === 'boolean' ? null : 'must be a boolean';
    case 'date':
      return typeof value === 'string' && validDate(value) ? null : 'must be a date YYYY-MM-DD';
    case 'dropdown':
      // Checked here, before the option lookup puts the value in a key: no option value is longer.
      return typeof value === 'string' && value.length > 0 && value.length <= OPTION_VALUE_MAX ? null : 'must be the value of one option';
    case 'multiselect':
      return Array.isArray(value) && value.length <= 50 && value.every((v) => typeof v === 'string' && v.length > 0 && v.length <= OPTION_VALUE_MAX) && new Set(value).size === value.length
        ? null
        : `must be an array of at most 50 distinct option values (each 1-${OPTION_VALUE_MAX} characters)`;
    case 'regex': {
      if (typeof value !== 'string' || value.length > 10_000) return 'must be a string';
      const ok = patternTest(field.regexPattern ?? '', value);
      // Only a pattern stored before RE2 was required can fail to compile; an admin must update the field.
      if (ok === null) return `cannot be checked: the field's pattern ${field.regexPattern} is not RE2 syntax; an admin must update it`;
      return ok ? null : `must match ${field.regexPattern}`;
    }
  }
}

/** Option values a stored entry refers to (none for other types). */
export function optionValuesOf(field: FieldRecord | undefined, value: unknown): string[] {
  if (!field) return [];
  if (field.fieldType === 'dropdown' && typeof value === 'string') return [value];
  if (field.fieldType === 'multiselect' && Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** Load RE2 when a given entry is a regex field's value (checkValue, and so mergeCustomFields, then need it). */
export async function loadPatternsFor(given: CustomFieldValue[] | undefined, fields: Map<string, FieldRecord>): Promise<void> {
  if (given?.some((e) => fields.get(e.id)?.fieldType === 'regex')) await loadPatterns();
}

/**
 * Merge given entries into the current ones (a null value clears the field)
 * and validate what is new: unknown or inactive fields, wrong types, and
 * required-for-agents fields left empty.
 */
export function mergeCustomFields(
  current: CustomFieldValue[],
  given: CustomFieldValue[] | undefined,
  fields: Map<string, FieldRecord>,
  requireAgents: boolean,
): { merged: CustomFieldValue[]; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const merged = new Map(current.map((c) => [c.id, c.value]));
  const seen = new Set<string>();
  for (const [i, entry] of (given ?? []).entries()) {
    const at = `customFields.${i}`;
    if (seen.has(entry.id)) {
      issues.push({ field: at, message: `field ${entry.id} appears more than once` });
      continue;
    }
    seen.add(entry.id);
    const field = fields.get(entry.id);
    if (!field) {
      issues.push({ field: at, message: `unknown custom field ${entry.id}` });
      continue;
    }
    if (entry.value === null || entry.value === undefined) {
      if (field.active && field.requiredForAgents) issues.push({ field: at, message: `${field.fieldKey} is required and cannot be cleared` });
      else merged.delete(entry.id);
      continue;
    }
    if (!field.active) {
      issues.push({ field: at, message: `field ${entry.id} is inactive and cannot take new values` });
      continue;
    }
    const problem = checkValue(field, entry.value);
    if (problem) issues.push({ field: at, message: `${field.fieldKey} ${problem}` });
    else merged.set(entry.id, entry.value);
  }
  if (requireAgents) {
    for (const f of fields.values()) {
      if (f.active && f.requiredForAgents && !merged.has(f.id)) issues.push({ field: 'customFields', message: `${f.fieldKey} (${f.id}) is required` });
    }
  }
  return { merged: [...merged].map(([id, value]) => ({ id, value })), issues };
}
