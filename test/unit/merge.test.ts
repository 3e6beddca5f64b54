import { describe, expect, it } from 'vitest';
import { MergeBodySchema } from '#shared/merge/model.ts';
import { mergedTags, MOVE_BATCH, moveBatchSize, sourceNote, targetNote } from '#shared/merge/rules.ts';

/** The rules of a merge (decisions §20), as tables: the target's tags, the notes, the move batches, the body. */
describe('mergedTags', () => {
  it.each([
    ["the target's first, then the source's it lacks, in order", ['a', 'b'], ['c', 'a', 'd'], ['a', 'b', 'c', 'd']],
    ['nothing new: unchanged', ['a'], ['a'], ['a']],
    ['an untagged target takes the source’s', [], ['x'], ['x']],
  ])('%s', (_n, target, source, expected) => expect(mergedTags(target, source)).toEqual(expected));

  it('keeps at most 100, the target’s first', () => {
    const target = Array.from({ length: 90 }, (_, i) => `t${i}`);
    const source = Array.from({ length: 20 }, (_, i) => `s${i}`);
    expect(mergedTags(target, source)).toEqual([...target, ...source.slice(0, 10)]);
  });
});

describe('the notes', () => {
  const source = { id: 'tkt_S', requesterName: 'Dana <B>', requesterEmail: 'dana@x.example' };
  it.each([
    [
      'names the source and, when it differs, its requester (escaped)',
      source,
      { requesterEmail: 'tara@x.example' },
      null,
      '<p>Merged tkt_S into this ticket (requester: Dana &lt;B&gt; &lt;dana@x.example&gt;)</p>',
    ],
    ['the same requester (any case) is not named', source, { requesterEmail: 'DANA@x.example' }, null, '<p>Merged tkt_S into this ticket</p>'],
    ['a requester with an email only', { ...source, requesterName: null }, { requesterEmail: null }, null, '<p>Merged tkt_S into this ticket (requester: dana@x.example)</p>'],
    ["the caller's comment instead", source, { requesterEmail: null }, '<p>Dup</p>', '<p>Dup</p>'],
  ])('target: %s', (_n, s, t, comment, expected) => expect(targetNote(s, t, comment)).toBe(expected));

  it('source: "Merged into" the target, or the comment', () => {
    expect(sourceNote('tkt_T', null)).toBe('<p>Merged into tkt_T</p>');
    expect(sourceNote('tkt_T', 'See T')).toBe('See T');
  });
});

describe('moveBatchSize', () => {
  const m = (attachments = 0, bytes = 1_000) => ({ attachments: Array.from({ length: attachments }), bytes });
  it.each([
    ['a full batch of small messages', Array.from({ length: 40 }, () => m()), MOVE_BATCH],
    ['fewer messages than a batch', [m(), m()], 2],
    ['attachments count as items: 3 + 5 x (3 + 20) > 100 stops at 4', Array.from({ length: 10 }, () => m(20)), 4],
    ['bytes: 3 messages of 1.2 MB stop at 2', [m(0, 1_200_000), m(0, 1_200_000), m(0, 1_200_000)], 2],
    ['one message always moves, however large', [m(20, 3_500_000)], 1],
  ])('%s', (_n, page, expected) => expect(moveBatchSize(page)).toBe(expected));
});

describe('the merge body', () => {
  it.each([
    ['no ids', { ids: [] }, 'ids'],
    ['26 ids', { ids: Array.from({ length: 26 }, (_, i) => `tkt_${i}`) }, 'ids'],
    ['an empty comment', { ids: ['tkt_1'], targetComment: '' }, 'targetComment'],
  ])('refuses %s', (_n, body, field) => {
    const r = MergeBodySchema.safeParse(body);
    expect(r.success).toBe(false);
    expect(r.error!.issues[0].path[0]).toBe(field);
  });
});
