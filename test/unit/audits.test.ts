import { describe, expect, it } from 'vitest';
import { AUDIT_TEXT_LIMIT, diffFields, newAudit, safeChanges } from '#shared/audits/service.ts';
import { ticketChanges } from '#shared/tickets/rules.ts';
import type { TicketRecord } from '#shared/tickets/repository.ts';
import { ticketFixture } from '../support/ticket-fixture.ts';

/** The rules of what an audit holds (decisions §15), as pure functions. */
const ticket = (over: Partial<TicketRecord> = {}): TicketRecord => ticketFixture({ status: 'new', version: 1, ...over });

describe('ticketChanges', () => {
  const fields = new Map([['fld_1', { fieldKey: 'order_ref' }]]);
  it.each([
    [
      'a create lists every set field from null',
      null,
      ticket({ tags: ['a'] }),
      [
        { field: 'subject', from: null, to: 'Printer' },
        { field: 'status', from: null, to: 'new' },
        { field: 'priority', from: null, to: 'normal' },
        { field: 'type', from: null, to: 'question' },
        { field: 'tags', from: null, to: ['a'] },
      ],
    ],
    [
      'an update lists only what differs',
      ticket(),
      ticket({ priority: 'high', assigneeId: 'usr_1' }),
      [
        { field: 'priority', from: 'normal', to: 'high' },
        { field: 'assigneeId', from: null, to: 'usr_1' },
      ],
    ],
    [
      'a custom field is named by its key',
      ticket({ customFields: [{ id: 'fld_1', value: 'A' }] }),
      ticket({ customFields: [{ id: 'fld_1', value: 'B' }] }),
      [{ field: 'customFields.order_ref', from: 'A', to: 'B' }],
    ],
    ['a custom field cleared goes to null', ticket({ customFields: [{ id: 'fld_1', value: 'A' }] }), ticket(), [{ field: 'customFields.order_ref', from: 'A', to: null }]],
    ['a deleted field is named by its id', ticket(), ticket({ customFields: [{ id: 'fld_gone', value: 3 }] }), [{ field: 'customFields.fld_gone', from: null, to: 3 }]],
    ['no change, no entries', ticket(), ticket({ updatedAt: 'later', version: 2 }), []],
  ] as const)('%s', (_name, before, after, expected) => {
    expect(ticketChanges(before as TicketRecord | null, after as TicketRecord, fields)).toEqual(expected);
  });
});

describe('safeChanges', () => {
  it('never keeps a secret, whatever a caller passes', () => {
    const out = safeChanges([
      { field: 'signingSecret', from: null, to: 'whsec_abc' },
      { field: 'key', from: null, to: 'sk_live' },
      { field: 'keyHash', from: null, to: 'abc' },
      { field: 'sessionToken', from: null, to: 'jwt' },
      { field: 'name', from: null, to: 'Zapier' },
    ]);
    expect(out).toEqual([{ field: 'name', from: null, to: 'Zapier' }]);
  });

  it('cuts long text and says so; short values stay as they are', () => {
    const long = 'x'.repeat(AUDIT_TEXT_LIMIT + 10);
    const [cut, kept] = safeChanges([
      { field: 'subject', from: 'short', to: long },
      { field: 'tags', from: ['a'], to: ['a', 'b'] },
    ]);
    expect((cut.to as string).length).toBe(AUDIT_TEXT_LIMIT + 1);
    expect(cut).toMatchObject({ from: 'short', truncated: true });
    expect(kept).toEqual({ field: 'tags', from: ['a'], to: ['a', 'b'] });
  });
});

describe('diffFields', () => {
  const fields = ['name', 'events', 'active'] as const;
  it.each([
    [
      'create',
      null,
      { name: 'a', events: ['x'], active: true },
      [
        { field: 'name', from: null, to: 'a' },
        { field: 'events', from: null, to: ['x'] },
        { field: 'active', from: null, to: true },
      ],
    ],
    [
      'update',
      { name: 'a', events: ['x'], active: true },
      { name: 'a', events: ['x', 'y'], active: false },
      [
        { field: 'events', from: ['x'], to: ['x', 'y'] },
        { field: 'active', from: true, to: false },
      ],
    ],
    ['same', { name: 'a', events: ['x'], active: true }, { name: 'a', events: ['x'], active: true }, []],
  ] as const)('%s', (_n, before, after, expected) => {
    expect(diffFields(before as never, after as never, fields as never)).toEqual(expected);
  });
});

describe('newAudit', () => {
  it('orders a ticket audit by version (zero-padded) and keeps the stage retention', () => {
    const a = newAudit({
      accountId: 'acct_1',
      resource: { type: 'ticket', id: 'tkt_1' },
      actor: { type: 'system', id: null },
      via: 'distribution',
      changes: [],
      version: 12,
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(a.seq).toBe('0000000012');
    expect(a.id).toMatch(/^aud_/);
    expect(a.expiresAt).toBe(Date.parse('2026-01-01T00:00:00.000Z') / 1000 + 365 * 86_400);
    expect(a).toMatchObject({ messageId: null, deleted: false, actorType: 'system', actorId: null });
  });
});
