import { describe, expect, it } from 'vitest';
import { trimSourceMap } from '../../infra/source-map-trim.ts';

// Prepare: one generated line with four segments: ours (a.ts), a dependency's (dep.js) twice, ours again (b.ts).
// Segments [genCol, source, line, col(, name)] as absolute values, encoded relative as the format wants.
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const vlq = (n: number) => {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let s = '';
  do {
    let d = v & 31;
    v >>>= 5;
    if (v > 0) d |= 32;
    s += B64[d];
  } while (v > 0);
  return s;
};
const encode = (segments: number[][]) => {
  const prev = [0, 0, 0, 0, 0];
  return segments
    .map((seg) =>
      seg
        .map((x, i) => {
          const out = vlq(x - prev[i]);
          prev[i] = x;
          return out;
        })
        .join(''),
    )
    .join(',');
};
const map = (segments: number[][], sources: string[], names: string[] = []) => JSON.stringify({ version: 3, sources, names, mappings: encode(segments) });
const ours = (s: string) => !s.includes('node_modules');

describe('trimSourceMap', () => {
  it('keeps our segments, unmaps each run of dependency code, and drops the sources and names no one uses', () => {
    // Act
    const out = JSON.parse(
      trimSourceMap(
        map(
          [
            [0, 0, 10, 2, 0],
            [5, 1, 1, 1, 1],
            [9, 1, 2, 1],
            [20, 2, 7, 4, 2],
          ],
          ['a.ts', 'node_modules/dep.js', 'b.ts'],
          ['ours', 'theirs', 'again'],
        ),
        ours,
      ),
    );
    // Assess: a.ts, a segment mapping to nothing where dep.js starts, then b.ts (renumbered 1); names renumbered too.
    expect(out.sources).toEqual(['a.ts', 'b.ts']);
    expect(out.names).toEqual(['ours', 'again']);
    expect(out.mappings).toBe(encode([[0, 0, 10, 2, 0], [5], [20, 1, 7, 4, 1]]));
  });

  it('is the identity on the mappings when every source is ours', () => {
    const given = map(
      [
        [0, 0, 1, 0],
        [4, 1, 3, 2],
      ],
      ['a.ts', 'b.ts'],
    );
    expect(JSON.parse(trimSourceMap(given, () => true)).mappings).toBe(JSON.parse(given).mappings);
  });
});
