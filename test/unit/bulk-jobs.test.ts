import { describe, expect, it } from 'vitest';
import { BulkDeleteBodySchema, BulkUpdateBodySchema } from '#shared/bulk/model.ts';
import { changedByJob, editedTags, ticketEdit } from '#shared/bulk/rules.ts';
import type { JobRecord, StoredResult } from '#shared/jobs/repository.ts';
import { distinctIds, nextChunk, toJobDto, withResults } from '#shared/jobs/rules.ts';
import type { TicketRecord } from '#shared/tickets/repository.ts';
import { ticketFixture } from '../support/ticket-fixture.ts';

/** The rules of a bulk job (decisions §16), as tables: ids, tag edits, chunks, resumption and the job as answered. */
const ticket = (tags: string[]): TicketRecord => ticketFixture({ tags });

const OK: StoredResult = { status: 'ok' };
const NOT_FOUND: StoredResult = { status: 'error', error: { code: 'NOT_FOUND', message: 'Ticket not found' } };

const job = (ids: string[], results: (StoredResult | null)[] = ids.map(() => null)): JobRecord => ({
  id: 'job_1',
  accountId: 'acct_1',
  type: 'bulk_update',
  status: 'running',
  ids,
  input: { priority: 'high' },
  principal: { accountId: 'acct_1', userId: 'usr_1', role: 'member', plan: 'paid', credential: 'api_key' },
  correlationId: null,
  results,
  succeeded: results.filter((r) => r?.status === 'ok').length,
  failed: results.filter((r) => r?.status === 'error').length,
  claims: {},
  leaseId: null,
  leaseUntil: 0,
  createdAt: '2026-01-01T00:00:00.000Z',
  completedAt: null,
  expiresAt: 0,
});

describe('distinctIds', () => {
  it.each([
    ['keeps the order given', ['b', 'a', 'c'], ['b', 'a', 'c']],
    ['counts a repeated id once, where it first came', ['a', 'b', 'a', 'c', 'b'], ['a', 'b', 'c']],
    ['keeps ids that are not ticket ids (they fail as not found)', ['__proto__', 'constructor'], ['__proto__', 'constructor']],
  ])('%s', (_n, given, expected) => expect(distinctIds(given)).toEqual(expected));
});

describe('editedTags', () => {
  it.each([
    ['adds at the end', ['a'], ['b'], [], ['a', 'b']],
    ['a tag it has stays where it is, once', ['a', 'b'], ['a', 'c'], [], ['a', 'b', 'c']],
    ['removes', ['a', 'b', 'c'], [], ['b'], ['a', 'c']],
    ['removing a tag it lacks changes nothing', ['a'], [], ['z'], ['a']],
    ['adds and removes together', ['a', 'b'], ['c'], ['a'], ['b', 'c']],
  ])('%s', (_n, current, add, remove, expected) => expect(editedTags(current, add, remove)).toEqual(expected));
});

describe('ticketEdit', () => {
  it('is the fields as given when no tag is edited', () => {
    expect(ticketEdit({ status: 'pending', tags: ['x'] })).toEqual({ status: 'pending', tags: ['x'] });
  });

  it('edits the tags of the ticket as each attempt reads it, with the other fields', () => {
    const edit = ticketEdit({ priority: 'high', addTags: ['vip'], removeTags: ['spam'] });
    if (typeof edit !== 'function') throw new Error('expected an edit of the ticket as read');
    expect(edit(ticket(['spam', 'billing']))).toEqual({ priority: 'high', tags: ['billing', 'vip'] });
    // A retry after a conflict reads the ticket again: a tag added meanwhile stays.
    expect(edit(ticket(['spam', 'billing', 'urgent']))).toEqual({ priority: 'high', tags: ['billing', 'urgent', 'vip'] });
  });

  it('refuses more than 100 distinct tags on a ticket', () => {
    const edit = ticketEdit({ addTags: ['one-more'] });
    if (typeof edit !== 'function') throw new Error('expected an edit of the ticket as read');
    expect(() => edit(ticket(Array.from({ length: 100 }, (_, i) => `t${i}`)))).toThrow(/at most 100/);
  });
});

describe('nextChunk', () => {
  it.each([
    ['the first positions of a new job', [null, null, null, null], 2, [0, 1]],
    ['skips positions that have a result', [OK, null, NOT_FOUND, null], 2, [1, 3]],
    ['the rest when fewer are left', [OK, OK, null, OK], 25, [2]],
    ['nothing once every ticket has its result', [OK, NOT_FOUND], 25, []],
  ] as const)('%s', (_n, results, size, expected) => expect(nextChunk({ results: [...results] }, size)).toEqual(expected));
});

describe('changedByJob (a chunk cut short, resumed)', () => {
  const bulk = (id: string | null) => ({ via: 'bulk' as const, actor: { type: 'user' as const, id } });
  const api = (id: string) => ({ via: 'api' as const, actor: { type: 'user' as const, id } });
  it.each([
    ['no change since the claim: not done', 3, [], false],
    ["the job's caller's bulk change since the claim: done", 3, [bulk('usr_1')], true],
    ['only a PUT of someone else since: not done', 3, [api('usr_2')], false],
    ["the same caller's PUT is not the job's change", 3, [api('usr_1')], false],
    ["another user's bulk change: not done", 3, [bulk('usr_2')], false],
    ['after a PUT, the bulk change: done', 3, [api('usr_2'), bulk('usr_1')], true],
    ['a ticket not found at the claim was never done', 0, [bulk('usr_1')], false],
  ] as const)('%s', (_n, claimed, audits, expected) => expect(changedByJob(claimed, audits, 'usr_1')).toBe(expected));
});

describe('withResults', () => {
  it('adds a chunk by position, counts, and completes the job with its last result', () => {
    const partial = withResults(job(['a', 'b', 'c']), new Map([[1, NOT_FOUND]]));
    expect(partial).toEqual({ results: [null, NOT_FOUND, null], succeeded: 0, failed: 1, complete: false });
    const done = withResults(
      job(['a', 'b', 'c'], partial.results),
      new Map([
        [0, OK],
        [2, OK],
      ]),
    );
    expect(done).toEqual({ results: [OK, NOT_FOUND, OK], succeeded: 2, failed: 1, complete: true });
  });
});

describe('toJobDto', () => {
  it('answers the results so far in the order of the ids, with the ticket ids', () => {
    const dto = toJobDto(job(['tkt_b', 'tkt_a', 'x'], [null, OK, NOT_FOUND]));
    expect(dto).toMatchObject({ id: 'job_1', type: 'bulk_update', status: 'running', total: 3, succeeded: 1, failed: 1, completedAt: null });
    expect(dto.results).toEqual([
      { id: 'tkt_a', status: 'ok' },
      { id: 'x', status: 'error', error: { code: 'NOT_FOUND', message: 'Ticket not found' } },
    ]);
  });
});

describe('bulk request bodies', () => {
  const ids = ['tkt_1'];
  it.each([
    ['a field', { ids, ticket: { status: 'pending' } }, true],
    ['addTags and removeTags', { ids, ticket: { addTags: ['a'], removeTags: ['b'] } }, true],
    ['no field at all', { ids, ticket: {} }, false],
    ['tags with addTags', { ids, ticket: { tags: ['a'], addTags: ['b'] } }, false],
    ['a tag both added and removed', { ids, ticket: { addTags: ['a'], removeTags: ['a'] } }, false],
    ['a field the bulk change does not take', { ids, ticket: { subject: 'x' } }, false],
    ['no ids', { ids: [], ticket: { status: 'open' } }, false],
    ['101 ids', { ids: Array.from({ length: 101 }, (_, i) => `tkt_${i}`), ticket: { status: 'open' } }, false],
    ['100 ids, repeats included', { ids: Array.from({ length: 100 }, (_, i) => `tkt_${i % 7}`), ticket: { status: 'open' } }, true],
    ['a status the PUT refuses', { ids, ticket: { status: 'done' } }, false],
    ['a tag with a space (as the PUT)', { ids, ticket: { addTags: ['a b'] } }, false],
  ])('bulk_update: %s', (_n, body, valid) => {
    const parsed = BulkUpdateBodySchema.safeParse(body);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(valid);
  });

  it('a field the bulk change does not take is ignored, so no field at all is refused', () => {
    // zod objects strip unknown keys: `subject` alone leaves no field (the row above).
    expect(BulkUpdateBodySchema.safeParse({ ids, ticket: { subject: 'x', priority: 'low' } }).data?.ticket).toEqual({ priority: 'low' });
  });

  it.each([
    ['ids', { ids: ['tkt_1', 'tkt_1'] }, true],
    ['an id over 64 characters', { ids: ['x'.repeat(65)] }, false],
    ['ids that are not strings', { ids: [1] }, false],
  ])('bulk_delete: %s', (_n, body, valid) => expect(BulkDeleteBodySchema.safeParse(body).success).toBe(valid));
});
