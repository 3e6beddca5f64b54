import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../infra/bundling.ts';

/** Where synthesized local templates are kept between runs (build output, not state: safe to delete). */
const CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'template');
/** Older templates kept beside the newest (another checkout state, a stage override of the tests). */
const KEEP = 8;

/**
 * What a synthesis reads: the app, the infrastructure and every module they import (the topology and route table,
 * the schemas the OpenAPI document is made of, and the sources infra/imports.ts reads to grant each function what
 * its bundle imports), the folding code here, and the CDK's version. All of it is hashed rather than a list of what
 * the synthesis loaded: any edit under these folders counts, so the cache can only be too eager to synthesize again,
 * never stale. About 20 ms for the ~600 files.
 */
const SOURCE_DIRS = ['infra', 'app', 'shared', 'functions'];
const SOURCE_FILES = ['package.json', 'package-lock.json', 'cdk.json', 'tsconfig.json', 'local/lambda/template.ts', 'local/lambda/template-cache.ts'];

export function sourcesDigest(root = PROJECT_ROOT): string {
  const files = [
    ...SOURCE_DIRS.flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => join(e.parentPath, e.name).slice(root.length + 1)),
    ),
    ...SOURCE_FILES,
  ].sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    try {
      hash.update(readFileSync(join(root, file)));
    } catch {
      hash.update('\0missing');
    }
  }
  return hash.digest('hex');
}

/**
 * The template `synthesize` makes for `settings`, from the cache when nothing it reads has changed since it was made
 * there: a synthesis loads the CDK and builds the app, 4-6 s of CPU at every `npm start` and in every test run's
 * setup, for a template that changes only when the code does.
 */
export async function cachedSynthesis<T>(settings: unknown, synthesize: () => Promise<T>, dir = CACHE): Promise<T> {
  const key = createHash('sha256')
    .update(JSON.stringify([PROJECT_ROOT, settings]))
    .update(sourcesDigest())
    .digest('hex')
    .slice(0, 32);
  const file = join(dir, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    // not synthesized yet for these sources (or an unreadable entry: made again)
  }
  const made = await synthesize();
  mkdirSync(dir, { recursive: true });
  // Written whole, then renamed: a process reading the cache at the same time sees the old entry or the new one.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(made));
  renameSync(tmp, file);
  prune(dir);
  return made;
}

function prune(dir: string) {
  const entries = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => ({ f, at: statSync(join(dir, f)).mtimeMs }))
    .sort((a, b) => b.at - a.at);
  for (const { f } of entries.slice(KEEP)) rmSync(join(dir, f), { force: true });
}
