import type { AuditChange } from '../audits/model.ts';
import { newEventDetail } from '../events/outbox.ts';
import type { TicketEventPayload } from './event-payloads.ts';
import type { TicketEventDetail } from './events.ts';
import type { CustomFieldValue } from '../ticket-fields/values.ts';
import type { Ticket, UpdateTicketInput } from './model.ts';
import type { TicketRecord } from './repository.ts';

/** A ticket event's detail: the payload, its id (minted here, once) and the account. */
export const newTicketEvent = (accountId: string, payload: TicketEventPayload): TicketEventDetail => newEventDetail(accountId, payload) as TicketEventDetail;

/**
 * The rules of a ticket change as pure functions (no I/O): what a PUT makes
 * of a ticket, which events a change publishes (decisions §7) and what its
 * audit lists (§15). The service reads, decides with these, and writes one
 * transaction; test/unit/ticket-rules.test.ts holds their tables.
 */

export const TRACKED = ['subject', 'status', 'priority', 'type', 'assigneeId', 'requesterEmail', 'requesterName', 'groupId', 'tags', 'customFields', 'mergedInto'] as const;

/** A ticket as the API answers it. */
export const toTicketDto = ({ accountId: _a, version: _v, ...t }: TicketRecord): Ticket => t;

/** The ticket after a PUT: the given fields over the current ones (custom fields already merged and checked), stamped and versioned. */
export function appliedUpdate(current: TicketRecord, input: UpdateTicketInput, customFields: CustomFieldValue[], at: string): TicketRecord {
  const { customFields: _cf, ...scalar } = input;
  const defined = Object.fromEntries(Object.entries(scalar).filter(([, v]) => v !== undefined));
  return { ...current, ...defined, customFields, updatedAt: at, version: current.version + 1 };
}

/** Events of a change (decisions §7): updated with every changed field; assignment and resolution on their own as well. */
export function changeEvents(accountId: string, before: TicketRecord, after: TicketRecord, at: string, actor?: TicketEventDetail['actor']): TicketEventDetail[] {
  const updatedFields: Record<string, { from: unknown; to: unknown }> = {};
  for (const f of TRACKED) if (JSON.stringify(before[f]) !== JSON.stringify(after[f])) updatedFields[f] = { from: before[f], to: after[f] };
  if (updatedFields.customFields) {
    // decisions §7: only the entries that changed, so a small edit of a large ticket stays a small event.
    const same = (a: { id: string; value: unknown }, list: { id: string; value: unknown }[]) => list.some((b) => b.id === a.id && JSON.stringify(b.value) === JSON.stringify(a.value));
    updatedFields.customFields = { from: before.customFields.filter((e) => !same(e, after.customFields)), to: after.customFields.filter((e) => !same(e, before.customFields)) };
  }
  if (!Object.keys(updatedFields).length) return [];
  const events = [newTicketEvent(accountId, { event: 'ticket.updated', timestamp: at, data: { ticket: { id: after.id, updatedFields } } })];
  if (updatedFields.assigneeId) {
    events.push(
      newTicketEvent(accountId, {
        event: 'ticket.assignment.changed',
        timestamp: at,
        data: { ticket: { id: after.id, updatedFields: { assigneeId: { from: before.assigneeId, to: after.assigneeId } } } },
      }),
    );
  }
  if (updatedFields.status && after.status === 'resolved') events.push(newTicketEvent(accountId, { event: 'ticket.resolved', timestamp: at, data: { ticket: toTicketDto(after) } }));
  return actor ? events.map((e) => ({ ...e, actor })) : events;
}

/**
 * What an audit lists of a ticket change (decisions §15): each tracked field
 * that differs, custom fields one entry each as `customFields.<fieldKey>`
 * (a field deleted since is named by its id). `before` null: a create.
 */
export function ticketChanges(before: TicketRecord | null, after: TicketRecord, fields: ReadonlyMap<string, { fieldKey: string }>): AuditChange[] {
  const changes: AuditChange[] = [];
  for (const f of TRACKED) {
    if (f === 'customFields') continue;
    const from = before ? before[f] : null;
    const to = after[f];
    if (before ? JSON.stringify(from) !== JSON.stringify(to) : to !== null && !(Array.isArray(to) && !to.length)) changes.push({ field: f, from: from ?? null, to: to ?? null });
  }
  const valueOf = (t: TicketRecord | null, id: string) => t?.customFields.find((c) => c.id === id)?.value ?? null;
  const ids = [...new Set([...(before?.customFields ?? []), ...after.customFields].map((c) => c.id))];
  for (const id of ids) {
    const from = valueOf(before, id);
    const to = valueOf(after, id);
    if (JSON.stringify(from) !== JSON.stringify(to)) changes.push({ field: `customFields.${fields.get(id)?.fieldKey ?? id}`, from, to });
  }
  return changes;
}
