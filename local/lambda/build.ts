import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_FILE, esbuildOptions, PROJECT_ROOT, writeBundle } from '../../infra/bundling.ts';

/** Where local bundles are kept between runs (build output, not state: safe to delete). */
export const BUNDLE_CACHE = join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'bundles');

export interface Bundles {
  /** The directory holding one folder per entry. */
  dir: string;
  /** The bundle file of an entry (relative to the project root). */
  file(entry: string): string;
  /** Whether this call ran esbuild (false: every input was unchanged since the last build). */
  built: boolean;
}

const folderOf = (entry: string) => entry.replace(/\.ts$/, '').replace(/[/\\]/g, '__');

interface Manifest {
  dir: string;
  entries: string[];
  options: string;
  /** Every input file esbuild read, with its size and mtime when it was read. */
  inputs: Record<string, [number, number]>;
}

const stamp = (file: string): [number, number] | undefined => {
  try {
    const s = statSync(join(PROJECT_ROOT, file));
    return [s.size, s.mtimeMs];
  } catch {
    return undefined;
  }
};

/**
 * Bundle every entry with the options `cdk synth` uses (infra/bundling.ts),
 * one esbuild run per entry (code splitting makes the chunks of one run
 * shared by all its entries, so a run per function is what gives each folder
 * the files of that function's asset), all at once in esbuild's service. A
 * later call with no input changed (esbuild's metafiles list them) reuses the
 * previous output, so a restart is quick and still picks up any edited file.
 * Each build gets a new folder, so a process still running an older build
 * keeps its files.
 */
export async function buildBundles(entries: readonly string[]): Promise<Bundles> {
  const wanted = [...new Set(entries)].sort();
  // The bundler's own files with the options: a change in how bundles are written is a change of every bundle.
  const options = JSON.stringify([esbuildOptions('ENTRY'), stamp('infra/bundling.ts'), stamp('infra/source-map-trim.ts')]);
  const manifestFile = join(BUNDLE_CACHE, 'manifest.json');
  const make = (dir: string, built: boolean): Bundles => ({ ...bundlesAt(dir), built });
  try {
    const m = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
    const fresh =
      m.options === options &&
      JSON.stringify(m.entries) === JSON.stringify(wanted) &&
      existsSync(m.dir) &&
      Object.entries(m.inputs).every(([file, s]) => {
        const now = stamp(file);
        return now && now[0] === s[0] && now[1] === s[1];
      });
    if (fresh) return make(m.dir, false);
  } catch {
    // no usable previous build
  }

  const { build } = await import('esbuild');
  mkdirSync(BUNDLE_CACHE, { recursive: true });
  const dir = join(BUNDLE_CACHE, `build-${Date.now()}-${process.pid}`);
  const results = await Promise.all(
    wanted.map(async (entry) => {
      const result = await build(esbuildOptions(entry));
      writeBundle(result, join(dir, folderOf(entry)));
      return result;
    }),
  );
  const inputs = Object.fromEntries(results.flatMap((r) => Object.keys(r.metafile.inputs)).flatMap((f) => (stamp(f) ? [[f, stamp(f)!]] : [])));
  const tmp = `${manifestFile}.${process.pid}`;
  writeFileSync(tmp, JSON.stringify({ dir, entries: wanted, options, inputs } satisfies Manifest));
  renameSync(tmp, manifestFile);
  // Old builds go once no process can still be running them (a test run or `npm start` keeps its folder for
  // as long as it runs, and several may build at once): anything but this build older than a day.
  for (const old of readdirSync(BUNDLE_CACHE).filter((d) => d.startsWith('build-') && join(BUNDLE_CACHE, d) !== dir)) {
    if (Date.now() - Number(old.split('-')[1]) > 24 * 3600_000) rmSync(join(BUNDLE_CACHE, old), { recursive: true, force: true });
  }
  return make(dir, true);
}

/** Bundles built earlier (by another process, e.g. the tests' global setup), found by their folder. */
export const bundlesAt = (dir: string): Bundles => ({ dir, built: false, file: (entry) => join(dir, folderOf(entry), BUNDLE_FILE) });
