import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles } from '../support/import-graph.ts';

/**
 * Module-level import cycles, counted as the hook counts them
 * (/work/shared/hooks/module-cycles.mjs, docs/architecture.md "The layers"):
 * each folder of shared/ is one module, and each file at shared/'s top; every
 * other top folder (app, functions, infra, local, scripts) is one module. An
 * edge is any import, re-export or import() of another module, type-only ones
 * included. A module imports only modules below it: no cycle, of any length.
 */
const ROOT = resolve(import.meta.dirname, '../..');

/** The files the hook reads: those git tracks under the source folders. */
const trackedSources = (): string[] =>
  execFileSync('git', ['ls-files', 'shared/*.ts', 'functions/*.ts', 'app/*.ts', 'infra/*.ts', 'local/*.ts', 'scripts/*.ts'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').filter(Boolean);

/** The module a path belongs to. */
const moduleOf = (file: string): string => {
  const parts = file.split('/');
  return parts[0] === 'shared' ? (parts.length > 2 ? `shared/${parts[1]}` : file) : parts[0];
};

/** The paths a file's source imports, re-exports or import()s, resolved from `#app/`, `#shared/`, `#functions/` and relative specifiers (packages left out). */
function importedPaths(file: string, source: string): string[] {
  const out: string[] = [];
  for (const m of source.matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const spec = m[1] ?? m[2];
    const alias = /^#(app|shared|functions)\//.exec(spec);
    if (alias) out.push(spec.slice(1));
    else if (spec.startsWith('.')) out.push(normalize(join(dirname(file), spec)).replaceAll('\\', '/'));
  }
  return out;
}

/** Each module and the other modules it imports. */
function moduleGraph(files: readonly string[], read: (file: string) => string): Map<string, string[]> {
  const edges = new Map<string, Set<string>>();
  for (const file of files) {
    const from = moduleOf(file);
    if (!edges.has(from)) edges.set(from, new Set());
    for (const path of importedPaths(file, read(file))) {
      const to = moduleOf(path);
      if (to !== from) edges.get(from)!.add(to);
    }
  }
  return new Map([...edges].map(([m, to]) => [m, [...to].sort()]));
}

describe('module graph', () => {
  it('folds files into modules and finds a cycle between two of them, through import(), re-exports and type-only imports alike', () => {
    const sources: Record<string, string> = {
      'shared/a/service.ts': "import type { B } from '../b/model.ts';",
      'shared/b/model.ts': "export { c } from '#shared/c.ts';",
      'shared/c.ts': "const later = () => import('./a/api.ts');",
      'shared/a/api.ts': '',
      'functions/x/handler.ts': "import { s } from '#shared/a/service.ts';",
    };
    const graph = moduleGraph(Object.keys(sources), (f) => sources[f]);
    expect(graph.get('functions')).toEqual(['shared/a']);
    expect(findCycles(graph)).toEqual(['shared/a -> shared/b -> shared/c.ts -> shared/a']);
  });
});

describe('the modules of app/, shared/, functions/, infra/, local/ and scripts/', () => {
  const graph = moduleGraph(trackedSources(), (f) => readFileSync(join(ROOT, f), 'utf8'));

  it('reads the real tree', () => {
    // Known edges, so a reader that finds nothing cannot pass the check below.
    expect(graph.get('functions')).toContain('shared/http');
    expect(graph.get('shared/tickets')).toContain('shared/db');
    expect(graph.get('app')).toContain('shared/tickets');
    expect([...graph.keys()].filter((m) => m.startsWith('shared/')).length).toBeGreaterThan(30);
  });

  it('has no cycle: every module imports only modules below it', () => {
    expect(findCycles(graph)).toEqual([]);
  });
});
