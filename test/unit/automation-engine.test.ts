import { describe, expect, it } from 'vitest';
import { actualValue, explainRule, firstMatch, holds, isTimeRule, planActions, type EngineTicket } from '#shared/automations/engine.ts';
import type { ConditionOp, Rule } from '#shared/automations/model.ts';
import { validateRule } from '#shared/automations/validate.ts';
import type { FieldRecord } from '#shared/ticket-fields/repository.ts';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const ticket: EngineTicket = {
  subject: 'Printer ON FIRE in room 4',
  status: 'open',
  priority: 'high',
  type: 'incident',
  tags: ['VIP', 'billing'],
  assigneeId: 'usr_1',
  requesterEmail: 'Ann@Customer.example',
  groupId: null,
  customFields: [
    { id: 'f_num', value: 42 },
    { id: 'f_date', value: '2026-03-01' },
    { id: 'f_check', value: true },
    { id: 'f_drop', value: 'gold' },
    { id: 'f_multi', value: ['red', 'blue'] },
  ],
  createdAt: '2026-03-09T09:30:00.000Z', // 26.5 h before NOW
  updatedAt: '2026-03-10T09:00:00.000Z', // 3 h before NOW
};

describe('condition operators on each field type', () => {
  // [field, op, value, expected]
  const cases: [string, ConditionOp, unknown, boolean][] = [
    // text: case-insensitive
    ['subject', 'equals', 'printer on fire in room 4', true],
    ['subject', 'notequal', 'printer on fire in room 4', false],
    ['subject', 'contains', 'on fire', true],
    ['subject', 'notcontain', 'ON FIRE', false],
    ['subject', 'startswith', 'PRINTER', true],
    ['subject', 'notstartwith', 'room', true],
    ['subject', 'endswith', 'room 4', true],
    ['subject', 'notendwith', 'room 4', false],
    ['requesterEmail', 'endswith', '@customer.EXAMPLE', true],
    // enums
    ['status', 'equals', 'open', true],
    ['status', 'equals', 'OPEN', true],
    ['status', 'notequal', 'new', true],
    ['status', 'containsoneormoreof', ['new', 'open'], true],
    ['status', 'containsnoneof', ['new', 'open'], false],
    ['priority', 'equals', 'low', false],
    ['type', 'containsnoneof', ['question'], true],
    // ids and "not set"
    ['assigneeId', 'equals', 'usr_1', true],
    ['assigneeId', 'equals', null, false],
    ['groupId', 'equals', null, true],
    ['groupId', 'notequal', null, false],
    ['groupId', 'equals', 'grp_1', false],
    ['groupId', 'notequal', 'grp_1', true],
    // tags: case-insensitive, arrays
    ['tags', 'containsoneormoreof', ['vip'], true],
    ['tags', 'containsoneormoreof', ['x', 'y'], false],
    ['tags', 'containsnoneof', ['x', 'BILLING'], false],
    ['tags', 'containsnoneof', ['x'], true],
    // numbers
    ['customField:f_num', 'equals', 42, true],
    ['customField:f_num', 'greaterthan', 41, true],
    ['customField:f_num', 'greaterthan', 42, false],
    ['customField:f_num', 'greaterthanorequalto', 42, true],
    ['customField:f_num', 'lessthan', 42, false],
    ['customField:f_num', 'lessthanorequalto', 42, true],
    // dates order as text
    ['customField:f_date', 'lessthan', '2026-03-02', true],
    ['customField:f_date', 'greaterthan', '2026-03-02', false],
    // checkbox, dropdown, multiselect
    ['customField:f_check', 'equals', true, true],
    ['customField:f_drop', 'equals', 'gold', true],
    ['customField:f_drop', 'containsoneormoreof', ['silver', 'gold'], true],
    ['customField:f_multi', 'containsoneormoreof', ['blue'], true],
    ['customField:f_multi', 'containsnoneof', ['green'], true],
    // time fields: whole hours
    ['hoursSinceCreated', 'equals', 26, true],
    ['hoursSinceCreated', 'greaterthan', 26, false],
    ['hoursSinceCreated', 'greaterthanorequalto', 24, true],
    ['hoursSinceUpdated', 'lessthan', 4, true],
    ['hoursSinceUpdated', 'equals', 3, true],
  ];
  it.each(cases)('%s %s %j -> %s', (field, op, value, expected) => {
    expect(holds(op, actualValue(field, ticket, NOW), value)).toBe(expected);
  });
});

describe('missing values', () => {
  const bare: EngineTicket = { status: 'new' };
  const cases: [string, ConditionOp, unknown, boolean][] = [
    ['subject', 'contains', 'x', false],
    ['subject', 'notcontain', 'x', true],
    ['subject', 'startswith', 'x', false],
    ['subject', 'notstartwith', 'x', true],
    ['subject', 'endswith', 'x', false],
    ['subject', 'notendwith', 'x', true],
    ['requesterEmail', 'equals', null, true],
    ['requesterEmail', 'notequal', 'a@b.example', true],
    ['tags', 'containsoneormoreof', ['a'], false],
    ['tags', 'containsnoneof', ['a'], true],
    ['customField:f_num', 'greaterthan', 0, false],
    ['customField:f_num', 'lessthan', 0, false],
    ['customField:f_num', 'equals', null, true],
    ['customField:f_check', 'equals', false, true], // an unchecked checkbox is false
    ['customField:f_check', 'equals', true, false],
    ['hoursSinceCreated', 'greaterthan', 0, false],
    ['hoursSinceResolved', 'greaterthanorequalto', 0, false], // not resolved: not set
  ];
  it.each(cases)('%s %s %j on an empty ticket -> %s', (field, op, value, expected) => {
    expect(holds(op, actualValue(field, bare, NOW), value)).toBe(expected);
  });

  it('counts hoursSinceResolved from the last change of a resolved ticket only', () => {
    expect(actualValue('hoursSinceResolved', { ...ticket, status: 'resolved' }, NOW)).toBe(3);
    expect(actualValue('hoursSinceResolved', ticket, NOW)).toBeNull();
  });
});

describe('all / any', () => {
  const c = (field: string, op: ConditionOp, value: unknown) => ({ field, op, value: value as never });
  const yes = c('status', 'equals', 'open');
  const no = c('status', 'equals', 'new');
  const rule = (all?: ReturnType<typeof c>[], any?: ReturnType<typeof c>[]): Rule => ({ all, any, actions: [{ field: 'priority', value: 'low' }] });
  const cases: [string, Rule, boolean][] = [
    ['all true', rule([yes, yes]), true],
    ['one of all false', rule([yes, no]), false],
    ['any with one true', rule(undefined, [no, yes]), true],
    ['any all false', rule(undefined, [no, no]), false],
    ['all true and any true', rule([yes], [no, yes]), true],
    ['all true but any false', rule([yes], [no]), false],
    ['all false, any true', rule([no], [yes]), false],
    ['empty any is ignored', rule([yes], []), true],
  ];
  it.each(cases)('%s', (_name, r, expected) => {
    expect(explainRule(r, ticket, NOW).matched).toBe(expected);
  });

  it('explains each condition with the actual value', () => {
    const out = explainRule(rule([c('priority', 'equals', 'urgent')], [c('tags', 'containsoneormoreof', ['vip'])]), ticket, NOW);
    expect(out.conditions).toEqual([
      { group: 'all', index: 0, field: 'priority', op: 'equals', value: 'urgent', actual: 'high', held: false },
      { group: 'any', index: 0, field: 'tags', op: 'containsoneormoreof', value: ['vip'], actual: ['VIP', 'billing'], held: true },
    ]);
  });
});

describe('first match and actions', () => {
  const r = (id: string, isActive: boolean, status: string) => ({
    id,
    isActive,
    rule: { all: [{ field: 'status', op: 'equals' as const, value: status }], actions: [{ field: 'priority', value: 'low' }] },
  });
  it('picks the first active automation whose rule holds', () => {
    expect(firstMatch([r('a', true, 'new'), r('b', false, 'open'), r('c', true, 'open'), r('d', true, 'open')], ticket, NOW)?.id).toBe('c');
    expect(firstMatch([r('a', true, 'new')], ticket, NOW)).toBeNull();
  });

  it('plans only what changes', () => {
    const { input, changes } = planActions(
      [
        { field: 'status', value: 'open' }, // already open
        { field: 'priority', value: 'urgent' },
        { field: 'addTags', value: ['vip', 'new-tag'] }, // vip present (case-insensitive)
        { field: 'removeTags', value: ['BILLING'] },
        { field: 'customField:f_drop', value: 'gold' }, // unchanged
        { field: 'customField:f_num', value: 7 },
        { field: 'groupId', value: null }, // already null
      ],
      ticket,
    );
    expect(input).toEqual({ priority: 'urgent', tags: ['VIP', 'new-tag'], customFields: [{ id: 'f_num', value: 7 }] });
    expect(changes.map((ch) => ch.field)).toEqual(['priority', 'customField:f_num', 'tags']);
  });

  it('plans nothing when every action is already true (no write, no event, no loop)', () => {
    expect(
      planActions(
        [
          { field: 'status', value: 'open' },
          { field: 'addTags', value: ['billing'] },
        ],
        ticket,
      ).input,
    ).toEqual({});
  });

  it('knows a time rule', () => {
    expect(isTimeRule({ all: [{ field: 'hoursSinceUpdated', op: 'greaterthan', value: 1 }], actions: [] })).toBe(true);
    expect(isTimeRule({ any: [{ field: 'status', op: 'equals', value: 'new' }], actions: [] })).toBe(false);
  });
});

describe('rule validation', () => {
  const field = (id: string, fieldType: FieldRecord['fieldType'], extra: Partial<FieldRecord> = {}) =>
    [id, { id, fieldKey: id, fieldType, active: true, requiredForAgents: false, regexPattern: null, ...extra } as FieldRecord] as const;
  const ctx = {
    fields: new Map([
      field('f_text', 'text'),
      field('f_num', 'number'),
      field('f_drop', 'dropdown'),
      field('f_multi', 'multiselect'),
      field('f_check', 'checkbox'),
      field('f_req', 'text', { requiredForAgents: true }),
    ]),
    options: new Map([
      ['f_drop', new Set(['gold'])],
      ['f_multi', new Set(['red'])],
    ]),
  };
  const action = [{ field: 'status', value: 'closed' }];
  const cond = (field: string, op: ConditionOp, value: unknown) => ({ all: [{ field, op, value: value as never }], actions: action });
  const cases: [string, Rule, string | null][] = [
    ['a valid rule', cond('tags', 'containsoneormoreof', ['x']), null],
    ['no condition', { actions: action }, 'rule'],
    ['unknown field', cond('colour', 'equals', 'red'), 'rule.all.0.field'],
    ['text operator on a number', cond('customField:f_num', 'contains', '4'), 'rule.all.0.op'],
    ['comparison on text', cond('subject', 'greaterthan', 'a'), 'rule.all.0.op'],
    ['list operator on text', cond('subject', 'containsoneormoreof', ['a']), 'rule.all.0.op'],
    ['equals on tags', cond('tags', 'equals', 'x'), 'rule.all.0.op'],
    ['array for a scalar operator', cond('status', 'equals', ['new']), 'rule.all.0.value'],
    ['unknown status', cond('status', 'equals', 'frozen'), 'rule.all.0.value'],
    ['null status', cond('status', 'equals', null), 'rule.all.0.value'],
    ['negative hours', cond('hoursSinceCreated', 'greaterthan', -1), 'rule.all.0.value'],
    ['fractional hours', cond('hoursSinceCreated', 'greaterthan', 1.5), 'rule.all.0.value'],
    ['unknown custom field', cond('customField:nope', 'equals', 'x'), 'rule.all.0.field'],
    ['unknown option', cond('customField:f_drop', 'equals', 'silver'), 'rule.all.0.value'],
    ['known option', cond('customField:f_drop', 'containsoneormoreof', ['gold']), null],
    ['checkbox with a string', cond('customField:f_check', 'equals', 'yes'), 'rule.all.0.value'],
    ['action: unknown field', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'subject', value: 'x' }] }, 'rule.actions.0.field'],
    ['action: twice the same field', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [...action, ...action] }, 'rule.actions.1.field'],
    ['action: bad tags', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'addTags', value: ['two words'] }] }, 'rule.actions.0.value'],
    ['action: number into text field', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'customField:f_text', value: 3 }] }, 'rule.actions.0.value'],
    ['action: unknown option', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'customField:f_multi', value: ['red', 'green'] }] }, 'rule.actions.0.value'],
    ['action: clear a required field', { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'customField:f_req', value: null }] }, 'rule.actions.0.value'],
  ];
  it.each(cases)('%s', (_name, rule, path) => {
    const issues = validateRule(rule, ctx);
    if (path === null) expect(issues).toEqual([]);
    else expect(issues.map((i) => i.field)).toContain(path);
  });

  it('names the exact index of the offending condition', () => {
    const rule: Rule = {
      all: [
        { field: 'status', op: 'equals', value: 'new' },
        { field: 'priority', op: 'equals', value: 'high' },
        { field: 'subject', op: 'lessthan', value: 'x' },
      ],
      actions: action,
    };
    expect(validateRule(rule, ctx)).toEqual([expect.objectContaining({ field: 'rule.all.2.op' })]);
  });
});
