import * as z from '../zod.ts';
import type { FieldIssue } from '../domain/errors.ts';
import type { FieldRecord } from '../ticket-fields/api.ts';
import { checkValue } from '../ticket-fields/values.ts';
import { UpdateTicketBodySchema, type UpdateTicketInput } from '../tickets/model.ts';
import type { TicketRecord } from '../tickets/service.ts';
import type { MacroAction, MacroComment } from './model.ts';

/**
 * A macro's actions as pure functions (decisions §22): each value checked as
 * a ticket update checks it (issues name `actions.N.value`), the ticket edit
 * they make of the ticket as read (tags added and removed from its own), and
 * the comment with its placeholders rendered.
 */

/** An action as stored: a custom field's action also names the field's id (tickets hold values by id). */
export interface StoredAction extends MacroAction {
  fieldId?: string;
}

const ticketFields = UpdateTicketBodySchema.shape.ticket.shape;
const SCHEMAS: Record<string, z.ZodMiniType> = {
  status: ticketFields.status,
  priority: ticketFields.priority,
  type: ticketFields.type,
  assigneeId: ticketFields.assigneeId,
  groupId: ticketFields.groupId,
  tags: ticketFields.tags,
  addTags: ticketFields.tags,
  removeTags: ticketFields.tags,
  comment: z.strictObject({ type: z.enum(['response', 'note']), content: z.string().check(z.minLength(1), z.maxLength(100_000)) }),
};

/** What the shape checks leave to the service (they need the account's data): an assignee, a group, a custom field's options. */
export interface Lookups {
  fieldsByKey: ReadonlyMap<string, FieldRecord>;
}

/** The shape of each value, and custom fields by key; answers the issues and the actions as stored. */
export function checkActions(actions: readonly MacroAction[], lookups: Lookups): { issues: FieldIssue[]; stored: StoredAction[] } {
  const issues: FieldIssue[] = [];
  const stored = actions.map((a, i): StoredAction => {
    const at = `actions.${i}`;
    if (a.field.startsWith('customFields.')) {
      const key = a.field.slice('customFields.'.length);
      const field = lookups.fieldsByKey.get(key);
      if (!field) {
        issues.push({ field: `${at}.field`, message: `no custom field has the key ${key}` });
        return a;
      }
      if (!field.active) issues.push({ field: `${at}.field`, message: `the field ${key} is inactive` });
      else if (a.value !== null) {
        const problem = checkValue(field, a.value);
        if (problem) issues.push({ field: `${at}.value`, message: problem });
      }
      return { ...a, fieldId: field.id };
    }
    const parsed = SCHEMAS[a.field].safeParse(a.value);
    if (!parsed.success) issues.push({ field: `${at}.value`, message: parsed.error.issues.map((x) => x.message).join('; ') });
    else if (a.field === 'status' && a.value === 'closed') issues.push({ field: `${at}.value`, message: 'only automations close tickets' });
    return parsed.success ? { ...a, value: parsed.data } : a;
  });
  return { issues, stored };
}

const valueOf = (actions: readonly StoredAction[], field: string) => actions.find((a) => a.field === field)?.value;

/** The ticket edit the actions make of a ticket as read: scalars as given, tags replaced or edited, custom fields merged by id. */
export function editOf(actions: readonly StoredAction[]): (current: TicketRecord) => UpdateTicketInput {
  return (current) => {
    const edit: UpdateTicketInput = {};
    for (const f of ['status', 'priority', 'type', 'assigneeId', 'groupId'] as const) {
      const v = valueOf(actions, f);
      if (v !== undefined) (edit as Record<string, unknown>)[f] = v;
    }
    const replace = valueOf(actions, 'tags') as string[] | undefined;
    const add = (valueOf(actions, 'addTags') as string[] | undefined) ?? [];
    const remove = new Set((valueOf(actions, 'removeTags') as string[] | undefined) ?? []);
    if (replace || add.length || remove.size) edit.tags = [...new Set([...(replace ?? current.tags), ...add])].filter((t) => !remove.has(t));
    const custom = actions.filter((a) => a.fieldId !== undefined).map((a) => ({ id: a.fieldId!, value: a.value }));
    if (custom.length) edit.customFields = custom;
    return edit;
  };
}

export const commentOf = (actions: readonly StoredAction[]): MacroComment | null => (valueOf(actions, 'comment') as MacroComment | undefined) ?? null;

/** Options a custom-field action names, by field id (checked against the field's options by the service). */
export function optionValues(actions: readonly StoredAction[], fieldsById: ReadonlyMap<string, FieldRecord>): Map<string, { index: number; values: string[] }> {
  const out = new Map<string, { index: number; values: string[] }>();
  actions.forEach((a, index) => {
    const f = a.fieldId ? fieldsById.get(a.fieldId) : undefined;
    if (!f || a.value === null) return;
    if (f.fieldType === 'dropdown' && typeof a.value === 'string') out.set(f.id, { index, values: [a.value] });
    if (f.fieldType === 'multiselect' && Array.isArray(a.value)) out.set(f.id, { index, values: a.value.map(String) });
  });
  return out;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** The values of decisions §22's placeholders. */
export function placeholders(ticket: TicketRecord, agentName: string | null): Record<string, string> {
  const first = (name: string | null) => (name ?? '').trim().split(/\s+/u)[0] ?? '';
  return {
    'ticket.id': ticket.id,
    'ticket.subject': ticket.subject,
    'ticket.status': ticket.status,
    'requester.name': ticket.requesterName ?? '',
    'requester.firstName': first(ticket.requesterName),
    'requester.email': ticket.requesterEmail ?? '',
    'agent.name': agentName ?? '',
    'agent.firstName': first(agentName),
  };
}

/** Each known placeholder replaced by its value, HTML-escaped; an unknown one left as written. */
export const render = (content: string, values: Record<string, string>): string =>
  content.replace(/\{\{\s*([A-Za-z]+\.[A-Za-z]+)\s*\}\}/g, (whole, name: string) => (Object.hasOwn(values, name) ? escapeHtml(values[name]) : whole));
