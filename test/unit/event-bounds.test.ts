import { describe, expect, it } from 'vitest';
import { boundDetail, entrySize, EVENT_BUDGET_BYTES, MIN_TRUNCATED_CHARS } from '#shared/events/entry-size.ts';
import { escapeForTransport, sqsBodyProblem } from '#shared/events/transport.ts';

const SOURCE = 'support-desk.tickets';
const detail = (data: Record<string, unknown>) => ({ eventId: 'evt_1', accountId: 'acc_1', event: 'ticket.created', timestamp: '2026-01-01T00:00:00.000Z', data });
const size = (d: unknown) => entrySize({ source: SOURCE, detailType: 'ticket.created', detail: JSON.stringify(d) });

describe('transport escaping (decisions §7: every character reaches receivers unchanged)', () => {
  it('escapes what SQS or fauxqs refuse, and the JSON decodes to the same value', () => {
    const value = { s: 'Launch 🚀 \uFFFF\uFFFE ok é 日本' };
    const escaped = escapeForTransport(JSON.stringify(value));
    expect(escaped).not.toMatch(/🚀|\uFFFF|\uFFFE/u);
    expect(escaped).toContain('\\ud83d\\ude80');
    expect(JSON.parse(escaped)).toEqual(value);
    expect(sqsBodyProblem(escaped)).toBeNull();
    expect(sqsBodyProblem(JSON.stringify(value))).toMatch(/character/);
  });

  it('refuses a body over 256 KB as SQS would', () => {
    expect(sqsBodyProblem('x'.repeat(256 * 1024 + 1))).toMatch(/exceeds/);
  });
});

describe('event size bound (decisions §7)', () => {
  it('leaves an event that fits untouched, without a truncated flag', () => {
    const d = detail({ ticket: { id: 'tkt_1', subject: 'Small' } });
    expect(boundDetail(d, SOURCE)).toBe(d);
  });

  it('cuts the longest strings first to a common cap, never ids or status, and marks truncated next to event', () => {
    const d = detail({ ticket: { id: 'tkt_1', status: 'open', subject: 's'.repeat(100), fields: Array.from({ length: 30 }, (_, i) => ({ id: `f${i}`, value: 'v'.repeat(9000) })) } });
    const bounded = boundDetail(d, SOURCE);
    expect(size(bounded)).toBeLessThanOrEqual(EVENT_BUDGET_BYTES);
    expect(Object.keys(bounded).slice(0, 4)).toEqual(['eventId', 'accountId', 'event', 'truncated']);
    const t = (bounded.data as any).ticket;
    expect(t).toMatchObject({ id: 'tkt_1', status: 'open', subject: 's'.repeat(100) });
    const lengths = t.fields.map((f: { value: string }) => f.value.length);
    expect(new Set(lengths).size).toBe(1);
    expect(lengths[0]).toBeGreaterThan(MIN_TRUNCATED_CHARS);
    expect(lengths[0]).toBeLessThan(9000);
    expect(t.fields[29].id).toBe('f29');
    // The caller's object is not modified.
    expect((d.data as any).ticket.fields[0].value).toHaveLength(9000);
  });

  it('counts escaped emoji, so a ticket full of them is bounded for the strictest transport too', () => {
    const d = detail({ ticket: { id: 'tkt_1', note: '🚀'.repeat(40_000) } });
    const bounded = boundDetail(d, SOURCE);
    expect(bounded.truncated).toBe(true);
    expect(size(bounded)).toBeLessThanOrEqual(EVENT_BUDGET_BYTES);
    // Cut on code points: no lone surrogate is left behind.
    expect((bounded.data as any).ticket.note).toMatch(/^(🚀)+$/u);
  });

  it('keeps only the ticket id when even 64-character values cannot fit', () => {
    const d = detail({ ticket: { id: 'tkt_1', tags: Array.from({ length: 5000 }, (_, i) => `${i}`.padEnd(64, 'x')) } });
    const bounded = boundDetail(d, SOURCE);
    expect(bounded).toMatchObject({ truncated: true, data: { ticket: { id: 'tkt_1' } } });
    expect((bounded.data as any).ticket.tags).toBeUndefined();
  });
});
