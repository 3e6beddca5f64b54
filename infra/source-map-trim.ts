/**
 * A bundle's source map cut down to our own sources (issue 30, cold start).
 *
 * With `--enable-source-maps` (every function's NODE_OPTIONS) Node reads and
 * decodes a module's whole map when it loads the module: for a function
 * bundle, ~1 MB whose mappings are nine tenths the AWS SDK, zod and the other
 * dependencies, 5-10% of a cold import. Stack traces need our files and
 * lines; a frame inside a dependency is readable from its function name. So
 * the mappings keep only segments whose source is ours (not under
 * node_modules), each run of dependency code starts with a segment that maps
 * to nothing (so it is not taken for the code of ours before it), and the
 * sources and names no segment uses any more are dropped.
 */
const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const B64_VALUE = new Map([...B64].map((c, i) => [c, i]));

function decodeSegment(text: string): number[] {
  const out: number[] = [];
  let value = 0;
  let shift = 0;
  for (const ch of text) {
    const digit = B64_VALUE.get(ch)!;
    value += (digit & 31) << shift;
    if (digit & 32) shift += 5;
    else {
      out.push(value & 1 ? -(value >>> 1) : value >>> 1);
      value = 0;
      shift = 0;
    }
  }
  return out;
}

function encodeValue(n: number): string {
  let v = n < 0 ? (-n << 1) | 1 : n << 1;
  let s = '';
  do {
    let digit = v & 31;
    v >>>= 5;
    if (v > 0) digit |= 32;
    s += B64[digit];
  } while (v > 0);
  return s;
}

interface SourceMapV3 {
  version: 3;
  sources: string[];
  sourcesContent?: (string | null)[];
  names: string[];
  mappings: string;
  [key: string]: unknown;
}

/** The map with only our own sources' mappings (see above); `ours(source)` says which sources to keep, `rename` how to name them. */
export function trimSourceMap(json: string, ours: (source: string) => boolean, rename: (source: string) => string = (s) => s): string {
  const map = JSON.parse(json) as SourceMapV3;
  const keepSource = map.sources.map(ours);
  // Absolute fields carried across segments and lines, as the format encodes them relative to the previous segment.
  let src = 0;
  let line = 0;
  let col = 0;
  let name = 0;
  const lines: Array<Array<[number, number?, number?, number?, number?]>> = map.mappings.split(';').map((l) => {
    let gen = 0;
    const out: Array<[number, number?, number?, number?, number?]> = [];
    let inOurs = false;
    for (const seg of l ? l.split(',') : []) {
      const f = decodeSegment(seg);
      gen += f[0];
      if (f.length === 1) {
        out.push([gen]);
        inOurs = false;
        continue;
      }
      src += f[1];
      line += f[2];
      col += f[3];
      if (f.length === 5) name += f[4];
      if (keepSource[src]) {
        out.push(f.length === 5 ? [gen, src, line, col, name] : [gen, src, line, col]);
        inOurs = true;
      } else if (inOurs) {
        // Dependency code from here on: map it to nothing rather than to ours before it.
        out.push([gen]);
        inOurs = false;
      }
    }
    return out;
  });
  // Renumber the sources and names still used.
  const usedSources = [...new Set(lines.flatMap((l) => l.flatMap((s) => (s.length > 1 ? [s[1]!] : []))))].sort((a, b) => a - b);
  const usedNames = [...new Set(lines.flatMap((l) => l.flatMap((s) => (s.length === 5 ? [s[4]!] : []))))].sort((a, b) => a - b);
  const srcIndex = new Map(usedSources.map((s, i) => [s, i]));
  const nameIndex = new Map(usedNames.map((n, i) => [n, i]));
  let pSrc = 0;
  let pLine = 0;
  let pCol = 0;
  let pName = 0;
  const mappings = lines
    .map((l) => {
      let pGen = 0;
      return l
        .map((s) => {
          let text = encodeValue(s[0] - pGen);
          pGen = s[0];
          if (s.length > 1) {
            const si = srcIndex.get(s[1]!)!;
            text += encodeValue(si - pSrc) + encodeValue(s[2]! - pLine) + encodeValue(s[3]! - pCol);
            pSrc = si;
            pLine = s[2]!;
            pCol = s[3]!;
            if (s.length === 5) {
              const ni = nameIndex.get(s[4]!)!;
              text += encodeValue(ni - pName);
              pName = ni;
            }
          }
          return text;
        })
        .join(',');
    })
    .join(';');
  return JSON.stringify({
    ...map,
    sources: usedSources.map((i) => rename(map.sources[i])),
    ...(map.sourcesContent ? { sourcesContent: usedSources.map((i) => map.sourcesContent![i]) } : {}),
    names: usedNames.map((i) => map.names[i]),
    mappings,
  });
}
