import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_FILE, BUNDLE_STORE, bundleFolder, bundleOptionsKey, esbuildOptions, PROJECT_ROOT, writeBundle } from '../../infra/bundling.ts';
import { bundleCacheEnabled } from '../../infra/bundle-cache.ts';

/** Where local builds are kept between runs (build output, not state: safe to delete). */
export const BUNDLE_CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'bundles');

export interface Bundles {
  /** The directory holding one folder per entry. */
  dir: string;
  /** The bundle file of an entry (relative to the project root). */
  file(entry: string): string;
  /** How many entries this build bundled, not finding them in the store (undefined: bundles built elsewhere). */
  built?: number;
}

/**
 * Bundle every entry with the options `cdk synth` uses (infra/bundling.ts), one esbuild run per entry (code
 * splitting makes the chunks of one run shared by all its entries, so a run per function is what gives each folder
 * the files of that function's asset), all at once in esbuild's service. An entry none of whose inputs changed since
 * it was last bundled, here or by `cdk synth`, is not bundled again (infra/bundle-cache.ts): a restart is quick, and
 * an edit rebuilds only the functions whose bundles read the edited file.
 *
 * A build is a new folder holding a link per entry to its bundle in the store, so a process still running an older
 * build keeps its files.
 */
export async function buildBundles(entries: readonly string[]): Promise<Bundles> {
  const wanted = [...new Set(entries)].sort();
  const options = new Map(wanted.map((entry) => [entry, bundleOptionsKey(entry)]));
  const kept = new Map<string, string>();
  const checked = new Map<string, string | undefined>();
  for (const entry of wanted) {
    const found = BUNDLE_STORE.find(bundleFolder(entry), options.get(entry)!, checked);
    if (found) kept.set(entry, found);
  }
  const dir = join(BUNDLE_CACHE, `build-${Date.now()}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const toBuild = wanted.filter((entry) => !kept.has(entry));
  if (toBuild.length) {
    const { build } = await import('esbuild');
    // Chunks repeat across functions: their maps are cut once for the whole build.
    const trimmed = new Map<string, string>();
    await Promise.all(
      toBuild.map(async (entry) => {
        const result = await build(esbuildOptions(entry));
        const write = (to: string) => writeBundle(result, to, trimmed);
        if (!bundleCacheEnabled()) return write(join(dir, bundleFolder(entry)));
        kept.set(entry, BUNDLE_STORE.keep(bundleFolder(entry), options.get(entry)!, Object.keys(result.metafile.inputs), write));
      }),
    );
  }
  for (const [entry, bundle] of kept) symlinkSync(bundle, join(dir, bundleFolder(entry)), 'dir');
  // Old builds go once no process can still be running them (a test run or `npm start` keeps its folder for
  // as long as it runs, and several may build at once): anything but this build older than a day.
  for (const old of readdirSync(BUNDLE_CACHE).filter((d) => d.startsWith('build-') && join(BUNDLE_CACHE, d) !== dir)) {
    if (Date.now() - Number(old.split('-')[1]) > 24 * 3600_000) rmSync(join(BUNDLE_CACHE, old), { recursive: true, force: true });
  }
  return { ...bundlesAt(dir), built: toBuild.length };
}

/** Bundles built earlier (by another process, e.g. the tests' global setup), found by their folder. */
export const bundlesAt = (dir: string): Bundles => ({ dir, file: (entry) => join(dir, bundleFolder(entry), BUNDLE_FILE) });
