import { TICKET_PRIORITIES, TICKET_STATUSES, TICKET_TYPES } from './system-values.ts';
import type { TicketFieldDto } from './model.ts';

/** System fields exist in every account, are listed first and cannot be changed (decisions §6). */
const EPOCH = '2024-01-01T00:00:00.000Z';

// Option ids carry the spec's opt_ prefix like every option (api-spec "Ticket field option"), stable per value.
const options = (fieldKey: string, values: readonly string[], def: string) =>
  values.map((v) => ({ id: `opt_system_${fieldKey}_${v}`, name: v[0].toUpperCase() + v.slice(1), value: v, default: v === def }));

const field = (fieldKey: string, title: string, type: TicketFieldDto['type'], position: number, extra: Partial<TicketFieldDto> = {}): TicketFieldDto => ({
  id: `system_${fieldKey}`,
  title,
  fieldKey,
  type,
  description: null,
  position,
  active: true,
  requiredForAgents: false,
  requiredForEndUsers: false,
  visibleToEndUsers: true,
  editableByEndUsers: false,
  regexPattern: null,
  defaultValue: null,
  options: null,
  createdAt: EPOCH,
  updatedAt: EPOCH,
  ...extra,
});

export const SYSTEM_FIELDS: readonly TicketFieldDto[] = [
  field('subject', 'Subject', 'text', 1, { requiredForAgents: true, requiredForEndUsers: true, editableByEndUsers: true }),
  field('status', 'Status', 'dropdown', 2, { defaultValue: 'new', options: options('status', TICKET_STATUSES, 'new') }),
  field('priority', 'Priority', 'dropdown', 3, { defaultValue: 'normal', options: options('priority', TICKET_PRIORITIES, 'normal') }),
  field('type', 'Type', 'dropdown', 4, { defaultValue: 'question', options: options('type', TICKET_TYPES, 'question') }),
  field('assignee', 'Assignee', 'text', 5),
  field('requester', 'Requester', 'text', 6, { requiredForEndUsers: true }),
  field('tags', 'Tags', 'multiselect', 7, { options: [] }),
];

/** Custom fields are positioned after the system ones by default. */
export const FIRST_CUSTOM_POSITION = SYSTEM_FIELDS.length + 1;

export const isSystemFieldId = (id: string) => id.startsWith('system_');
export const systemField = (id: string) => SYSTEM_FIELDS.find((f) => f.id === id);
