import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PROJECT_ROOT } from './service-function.ts';

const graphs = new Map<string, Set<string>>();

/** Every project file a function's bundle contains (static and dynamic project imports, as esbuild follows them). */
function bundleFiles(file: string): Set<string> {
  const known = graphs.get(file);
  if (known) return known;
  const files = new Set([file]);
  graphs.set(file, files);
  for (const m of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*'(\.{1,2}\/[^']+|#(?:app|shared|functions)\/[^']+)'/g)) {
    // Relative paths, and the package's own `#app/*` / `#shared/*` / `#functions/*` imports (package.json "imports").
    const target = m[1].startsWith('#') ? join(PROJECT_ROOT, m[1].slice(1)) : resolve(dirname(file), m[1]);
    if (existsSync(target)) for (const f of bundleFiles(target)) files.add(f);
  }
  return files;
}

/**
 * Does the function at `entry` bundle `module` (both relative to the project
 * root)? Grants follow from this, so a function gets a permission exactly when
 * its code can use it, and a new import cannot silently lack one.
 */
export const bundles = (entry: string, module: string): boolean => bundleFiles(join(PROJECT_ROOT, entry)).has(join(PROJECT_ROOT, module));
