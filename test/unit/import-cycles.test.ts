import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles } from '../support/import-graph.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** The code that ships or runs the stack; tests and benches may import anything. */
const SOURCE_DIRS = ['app', 'shared', 'functions', 'local', 'infra', 'scripts'];
const SKIPPED = new Set(['node_modules', 'bench/data-layer-libraries']);

/**
 * Module specifiers of a file's static imports and re-exports, `import type` included (a type-only
 * cycle still ties two modules together). Top-level statements start a line (Prettier); a
 * dynamic import() is left out: it loads when called, after both modules have been evaluated.
 */
function staticImports(source: string): string[] {
  return [...source.matchAll(/^(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/gm)].map((m) => m[1]);
}

/** Every .ts file under the source directories, relative to the root, `/`-separated. */
function sourceFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (SKIPPED.has(entry.name) || SKIPPED.has(path)) continue;
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) files.push(path);
    }
  };
  SOURCE_DIRS.forEach(walk);
  return files;
}

/** package.json "imports" (`#shared/*` -> `./shared/*`) as prefix pairs: `#shared/`, `shared/`. */
function aliases(): [string, string][] {
  const imports: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).imports;
  return Object.entries(imports).map(([from, to]) => [from.replace(/\*$/, ''), to.replace(/^\.\//, '').replace(/\*$/, '')]);
}

/** Each source file and the source files it imports (packages and files elsewhere left out). */
function importGraph(): Map<string, string[]> {
  const files = sourceFiles();
  const known = new Set(files);
  const alias = aliases();
  const resolveSpecifier = (from: string, spec: string): string | null => {
    if (spec.startsWith('.')) return relative(ROOT, resolve(ROOT, dirname(from), spec)).replaceAll('\\', '/');
    const hit = alias.find(([prefix]) => spec.startsWith(prefix));
    return hit ? hit[1] + spec.slice(hit[0].length) : null;
  };
  return new Map(
    files.map((file) => [
      file,
      staticImports(readFileSync(join(ROOT, file), 'utf8'))
        .map((spec) => resolveSpecifier(file, spec))
        .filter((to): to is string => to !== null && known.has(to)),
    ]),
  );
}

describe('finding import cycles', () => {
  it.each([
    ['no cycle in a chain', { a: ['b'], b: ['c'], c: [] }, []],
    ['a pair', { a: ['b'], b: ['a'] }, ['a -> b -> a']],
    ['a file that imports itself', { a: ['a'] }, ['a -> a']],
    ['a longer ring, reported from its first file', { d: ['b'], b: ['c'], c: ['d'], e: ['d'] }, ['b -> c -> d -> b']],
    ['the shortest way back when a component has several', { a: ['b', 'c'], b: ['c'], c: ['a'] }, ['a -> c -> a']],
    ['two separate cycles', { a: ['b'], b: ['a'], x: ['y'], y: ['z'], z: ['x'] }, ['a -> b -> a', 'x -> y -> z -> x']],
  ])('%s', (_name, edges, expected) => {
    expect(findCycles(new Map(Object.entries(edges))).sort()).toEqual(expected);
  });

  it('reads static imports and re-exports, type-only and multi-line ones too, but not import() or comments', () => {
    const source = [
      "import { a } from './a.ts';",
      "import type { B } from '#shared/b.ts';",
      'import {',
      '  c,',
      '  type C,',
      "} from '../c.ts';",
      "import * as d from './d.ts';",
      "import './e.ts';",
      "export { f } from './f.ts';",
      "export * from './g.ts';",
      "export type { H } from './h.ts';",
      "export const late = () => import('./later.ts');",
      " * import { x } from './in-a-comment.ts';",
      "// import { y } from './commented-out.ts';",
      'const s = \'import z from "./in-a-string.ts"\';',
    ].join('\n');
    expect(staticImports(source)).toEqual(['./a.ts', '#shared/b.ts', '../c.ts', './d.ts', './e.ts', './f.ts', './g.ts', './h.ts']);
  });
});

describe('the import graph of app/, shared/, functions/, local/, infra/ and scripts/', () => {
  const graph = importGraph();

  it('resolves relative and package.json "imports" paths to the files they name', () => {
    // A known edge of each kind, so a reader that finds nothing cannot pass the cycle check below.
    expect(graph.get('functions/tickets/handler.ts')).toContain('shared/http/middleware.ts');
    expect(graph.get('shared/tickets/service.ts')).toContain('shared/tickets/repository.ts');
    expect(graph.size).toBeGreaterThan(200);
  });

  it('has no cycle: no file reaches itself through its imports', () => {
    expect(findCycles(graph)).toEqual([]);
  });

  it("imports zod only through shared/zod.ts (zod/mini with zod's English messages; docs/performance.md, stop 56)", () => {
    // zod's classic API in a bundle is 94 KB and every schema costs more to build at a cold start; mini without the
    // messages answers "Invalid input" for everything.
    const direct = sourceFiles().filter((file) => file !== 'shared/zod.ts' && staticImports(readFileSync(join(ROOT, file), 'utf8')).some((s) => s === 'zod' || s.startsWith('zod/')));
    expect(direct).toEqual([]);
    expect(staticImports(readFileSync(join(ROOT, 'shared/zod.ts'), 'utf8'))).toContain('zod/mini');
  });

  it('loads no CDK when local/stack.ts is imported (every test file, npm start and the admin CLI import it; the template is cached)', () => {
    // About 1 s of CPU per import when infra/bundling.ts still imported aws-cdk-lib: a quarter of the suite's time.
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file)) return;
      reached.add(file);
      graph.get(file)?.forEach(visit);
    };
    visit('local/stack.ts');
    // Type-only imports are erased; a value import (one `type` name among others is still one) loads the package.
    const cdkValueImport = /^import\s+(?!type\s)[^;]*?from\s+['"](?:aws-cdk-lib|constructs)(?:\/[^'"]*)?['"]/m;
    const loading = [...reached].filter((file) => cdkValueImport.test(readFileSync(join(ROOT, file), 'utf8')));

    expect(reached).toContain('local/lambda/build.ts');
    expect(reached).toContain('infra/bundling.ts');
    expect(loading).toEqual([]);
  });
});
