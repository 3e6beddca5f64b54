import { describe, expect, it } from 'vitest';
import { checkActions, editOf, placeholders, render } from '#shared/macros/actions.ts';
import { checkConditions, matchesView } from '#shared/views/conditions.ts';
import { walkOf } from '#shared/views/service.ts';
import type { FieldRecord } from '#shared/ticket-fields/api.ts';
import { ticketFixture } from '../support/ticket-fixture.ts';

/** View conditions (decisions §21) and macro actions (§22) as tables: what is refused and where, what matches, what a macro does. */
const NOW = Date.parse('2026-02-02T12:00:00.000Z');
const tier = { id: 'fld_tier', fieldKey: 'tier', fieldType: 'dropdown', active: true } as FieldRecord;
const seats = { id: 'fld_seats', fieldKey: 'seats', fieldType: 'number', active: true } as FieldRecord;
const FIELDS = new Map([
  ['tier', tier],
  ['seats', seats],
]);
const cond = (field: string, operator: string, value: unknown) => ({ field, operator, value }) as never;

describe('view conditions', () => {
  it.each([
    ['a status outside the workflow', cond('status', 'is', 'done'), 'conditions.all.0.value'],
    ['in without an array', cond('priority', 'in', 'high'), 'conditions.all.0.value'],
    ['an operator that does not fit the field', cond('status', 'greaterThan', 'open'), 'conditions.all.0.operator'],
    ['a tag with a space', cond('tags', 'includes', 'two words'), 'conditions.all.0.value'],
    ['an unknown custom field', cond('customFields.nope', 'is', 'x'), 'conditions.all.0.field'],
    ['a number field given a string', cond('customFields.seats', 'greaterThan', 'ten'), 'conditions.all.0.value'],
    ['negative hours', cond('hoursSinceCreated', 'greaterThan', -1), 'conditions.all.0.value'],
  ])('refuses %s, naming it', (_n, c, field) => {
    expect(checkConditions({ all: [c], any: [] }, FIELDS).issues.map((i) => i.field)).toEqual([field]);
  });

  it('names a condition of any by its place', () => {
    expect(checkConditions({ all: [], any: [cond('status', 'is', 'open'), cond('type', 'is', 'bug')] }, FIELDS).issues.map((i) => i.field)).toEqual(['conditions.any.1.value']);
  });

  const t = ticketFixture({ status: 'open', priority: 'high', tags: ['VIP', 'billing'], assigneeId: null, customFields: [{ id: 'fld_seats', value: 12 }], createdAt: '2026-02-01T00:00:00.000Z' });
  it.each([
    ['status in', [cond('status', 'in', ['new', 'open'])], [], true],
    ['status isNot', [cond('status', 'isNot', 'open')], [], false],
    ['assignee is null', [cond('assigneeId', 'is', null)], [], true],
    ['tags include, ignoring case', [cond('tags', 'includes', 'vip')], [], true],
    ['tags exclude', [cond('tags', 'excludes', ['billing'])], [], false],
    ['a custom number above', [cond('customFields.seats', 'greaterThan', 10)], [], true],
    ['hours since created', [cond('hoursSinceCreated', 'greaterThan', 24)], [], true],
    ['any: one of them', [], [cond('priority', 'is', 'low'), cond('type', 'is', 'question')], true],
    ['any: none of them', [], [cond('priority', 'is', 'low'), cond('type', 'is', 'task')], false],
  ])('%s', (_n, all, any, expected) => {
    const { issues, stored } = checkConditions({ all, any }, FIELDS);
    expect(issues).toEqual([]);
    expect(matchesView(t, stored, NOW)).toBe(expected);
  });

  it('reads an index for the statuses and the assignee its all conditions pin, and none for a sort by priority', () => {
    const conditions = { all: [cond('status', 'notIn', ['closed', 'resolved']), cond('assigneeId', 'is', 'usr_1')], any: [] };
    expect(walkOf({ conditions, sort: { by: 'updatedAt', order: 'desc' } })).toEqual({
      sortBy: 'updated_at',
      order: 'desc',
      statuses: ['new', 'open', 'pending'],
      priorities: undefined,
      assigneeId: 'usr_1',
    });
    expect(walkOf({ conditions: { all: [], any: [] }, sort: { by: 'priority', order: 'asc' } })).toMatchObject({ statuses: undefined, assigneeId: undefined });
  });
});

describe('macro actions', () => {
  it.each([
    ['a status that does not exist', { field: 'status', value: 'done' }, 'actions.0.value'],
    ['closing (automations only)', { field: 'status', value: 'closed' }, 'actions.0.value'],
    ['a tag with a comma', { field: 'addTags', value: ['a,b'] }, 'actions.0.value'],
    ['a comment of another type', { field: 'comment', value: { type: 'email', content: 'x' } }, 'actions.0.value'],
    ['a custom field of no such key', { field: 'customFields.nope', value: 1 }, 'actions.0.field'],
    ['a custom value of the wrong type', { field: 'customFields.seats', value: 'many' }, 'actions.0.value'],
  ])('refuses %s, naming it', (_n, action, field) => {
    expect(checkActions([action], { fieldsByKey: FIELDS }).issues.map((i) => i.field)).toEqual([field]);
  });

  it('edits the tags the ticket has, and sets custom fields by id', () => {
    const { stored } = checkActions(
      [
        { field: 'addTags', value: ['new', 'vip'] },
        { field: 'removeTags', value: ['old'] },
        { field: 'customFields.seats', value: 3 },
      ],
      { fieldsByKey: FIELDS },
    );
    expect(editOf(stored)(ticketFixture({ tags: ['old', 'vip', 'keep'] }))).toEqual({ tags: ['vip', 'keep', 'new'], customFields: [{ id: 'fld_seats', value: 3 }] });
  });

  it('renders placeholders HTML-escaped and leaves unknown ones as written', () => {
    const values = placeholders(ticketFixture({ id: 'tkt_1', requesterName: 'Ann <b>Lee</b>', requesterEmail: 'ann@example.com' }), 'Sam Agent');
    expect(render('Hi {{requester.firstName}} ({{ requester.name }}), {{agent.firstName}} on {{ticket.id}} {{ticket.nope}}', values)).toBe(
      'Hi Ann (Ann &lt;b&gt;Lee&lt;/b&gt;), Sam on tkt_1 {{ticket.nope}}',
    );
  });
});
