import { describe, expect, it } from 'vitest';
import { appliedUpdate, changeEvents } from '#shared/tickets/rules.ts';
import type { TicketRecord } from '#shared/tickets/repository.ts';
import { ticketFixture } from '../support/ticket-fixture.ts';

/** What a PUT makes of a ticket and which events it publishes (decisions §6, §7), as tables. */
const ticket = ticketFixture;
const AT = '2026-02-02T00:00:00.000Z';

describe('appliedUpdate', () => {
  it.each([
    ['only the given fields change', { priority: 'high' }, { priority: 'high', subject: 'Printer' }],
    ['undefined leaves a field as it was', { priority: undefined, status: 'pending' }, { priority: 'normal', status: 'pending' }],
    ['null clears an optional field', { assigneeId: null }, { assigneeId: null }],
    ['tags replace', { tags: ['a', 'b'] }, { tags: ['a', 'b'] }],
  ] as const)('%s', (_n, input, expected) => {
    const next = appliedUpdate(ticket({ assigneeId: 'usr_1' }), input as never, [], AT);
    expect(next).toMatchObject({ ...expected, updatedAt: AT, version: 4 });
  });
});

const eventsOf = (before: TicketRecord, after: TicketRecord) => changeEvents('acct_1', before, after, AT).map((e) => ({ event: e.event, data: e.data }));

describe('changeEvents', () => {
  it.each([
    ['no change publishes nothing', ticket(), ticket({ version: 4 }), []],
    [
      'a field change is one ticket.updated with from and to',
      ticket(),
      ticket({ priority: 'urgent' }),
      [{ event: 'ticket.updated', data: { ticket: { id: 'tkt_1', updatedFields: { priority: { from: 'normal', to: 'urgent' } } } } }],
    ],
    [
      'an assignment adds ticket.assignment.changed',
      ticket(),
      ticket({ assigneeId: 'usr_2' }),
      [
        { event: 'ticket.updated', data: { ticket: { id: 'tkt_1', updatedFields: { assigneeId: { from: null, to: 'usr_2' } } } } },
        { event: 'ticket.assignment.changed', data: { ticket: { id: 'tkt_1', updatedFields: { assigneeId: { from: null, to: 'usr_2' } } } } },
      ],
    ],
    [
      'resolving adds ticket.resolved with the full ticket',
      ticket(),
      ticket({ status: 'resolved' }),
      [
        { event: 'ticket.updated', data: { ticket: { id: 'tkt_1', updatedFields: { status: { from: 'open', to: 'resolved' } } } } },
        { event: 'ticket.resolved', data: { ticket: expect.objectContaining({ id: 'tkt_1', status: 'resolved' }) } },
      ],
    ],
    [
      'custom fields carry only the entries that changed',
      ticket({
        customFields: [
          { id: 'f1', value: 'a' },
          { id: 'f2', value: 1 },
        ],
      }),
      ticket({
        customFields: [
          { id: 'f1', value: 'a' },
          { id: 'f2', value: 2 },
        ],
      }),
      [{ event: 'ticket.updated', data: { ticket: { id: 'tkt_1', updatedFields: { customFields: { from: [{ id: 'f2', value: 1 }], to: [{ id: 'f2', value: 2 }] } } } } }],
    ],
  ] as const)('%s', (_n, before, after, expected) => {
    expect(eventsOf(before, after)).toEqual(expected);
  });

  it('marks every event with the actor when one is given (automations skip their own)', () => {
    const events = changeEvents('acct_1', ticket(), ticket({ status: 'resolved' }), AT, { type: 'automation', id: 'aut_1' });
    expect(events.map((e) => e.actor)).toEqual([
      { type: 'automation', id: 'aut_1' },
      { type: 'automation', id: 'aut_1' },
    ]);
  });
});
