/**
 * `BENCH_ONLY=bundles`: what each function ships and what its cold start
 * costs (issue 30, part 1). For each function of the template, from the
 * bundles the stack runs (local/lambda/build.ts, byte for byte the assets of
 * `cdk synth`):
 *
 *   - the entry file, what a cold start loads (the entry and the chunks it
 *     imports statically: infra/bundling.ts initFiles) against its goal, and
 *     what loads on first use (the other chunks);
 *   - the import in a fresh Node 24 process with exactly the environment the
 *     stack gave the function (NODE_OPTIONS=--enable-source-maps included):
 *     wall and CPU ms, median of RUNS;
 *   - with BENCH_BUNDLES_BEFORE=<dir> (a folder per entry as the local builder
 *     names them, e.g. a build of an earlier commit), the same figures for those
 *     bundles, imported in turn with these so both see the same machine load.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_BUDGET_KB, BUNDLE_BUDGET_KB_BY_ENTRY, CHUNK_DIR, initBytes } from '../infra/bundling.ts';
import type { Bundles } from '../local/lambda/build.ts';
import type { LocalLambda } from '../local/lambda/index.ts';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (bytes: number) => (bytes / 1024).toFixed(0);

/** Bytes of every chunk of a bundle (loaded at a cold start or later). */
function allBytes(entryFile: string): number {
  const dir = join(entryFile, '..', CHUNK_DIR);
  const chunks = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.mjs')) : [];
  return statSync(entryFile).size + chunks.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

/** One cold import in a fresh process: wall and CPU ms of `import(file)` as the process measures it; NaN if it failed. */
function coldImport(file: string, env: Record<string, string>): { wall: number; cpu: number } {
  const script = `const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(file)});const u=process.cpuUsage(c);console.log(JSON.stringify({wall:performance.now()-t,cpu:(u.user+u.system)/1000}))`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
  if (r.status !== 0) return { wall: NaN, cpu: NaN };
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

export interface BundleRow {
  name: string;
  entry: string;
  memoryMb: number;
  entryKb: number;
  initKb: number;
  lazyKb: number;
  goalKb: number;
  wallMs: number;
  cpuMs: number;
  before?: { initKb: number; wallMs: number; cpuMs: number };
}

export function benchBundles(opts: { lambda: LocalLambda; bundles: Bundles; beforeDir?: string }): BundleRow[] {
  const { lambda, bundles } = opts;
  const before = opts.beforeDir;
  const rows: BundleRow[] = [];
  const defs = [...lambda.deployment.functions.values()].sort((a, b) => a.name.localeCompare(b.name));
  for (const def of defs) {
    const file = bundles.file(def.entry);
    const old = before ? join(before, file.slice(bundles.dir.length)) : undefined;
    const env = lambda.environment(def.logicalId);
    const now: Array<{ wall: number; cpu: number }> = [];
    const then: Array<{ wall: number; cpu: number }> = [];
    for (let i = 0; i < RUNS; i++) {
      now.push(coldImport(file, env));
      if (old && existsSync(old)) then.push(coldImport(old, env));
    }
    const init = initBytes(file);
    rows.push({
      name: def.name,
      entry: def.entry,
      memoryMb: def.memoryMb,
      entryKb: statSync(file).size / 1024,
      initKb: init / 1024,
      lazyKb: (allBytes(file) - init) / 1024,
      goalKb: BUNDLE_BUDGET_KB_BY_ENTRY[def.entry] ?? BUNDLE_BUDGET_KB,
      wallMs: median(now.map((x) => x.wall)),
      cpuMs: median(now.map((x) => x.cpu)),
      ...(then.length ? { before: { initKb: initBytes(old!) / 1024, wallMs: median(then.map((x) => x.wall)), cpuMs: median(then.map((x) => x.cpu)) } } : {}),
    });
  }
  return rows;
}

/** The per-function table as `npm run bench` prints it (and docs/performance.md keeps it). */
export function printBundles(rows: BundleRow[]): void {
  const withBefore = rows.some((r) => r.before);
  console.log(
    `\nFunction bundles (issue 30): KB a cold start loads (entry file and its static chunks; goal ≤ 300, messages and email inbound ≤ 400), KB loaded on first use, and a cold import in a fresh Node 24 process with the function's environment (median of ${RUNS}; goal ≤ 60 ms):\n`,
  );
  const head = ['function', 'MB', 'entry KB', 'cold-start KB', 'goal', 'on first use KB', 'import ms', 'CPU ms'];
  if (withBefore) head.push('before: KB', 'import ms', 'CPU ms');
  const table = [head];
  for (const r of rows) {
    const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'FAILED');
    const row = [r.name, String(r.memoryMb), kb(r.entryKb * 1024), kb(r.initKb * 1024), `${r.initKb <= r.goalKb ? '≤' : '>'} ${r.goalKb}`, kb(r.lazyKb * 1024), fmt(r.wallMs), fmt(r.cpuMs)];
    if (withBefore) row.push(r.before ? kb(r.before.initKb * 1024) : '-', r.before ? fmt(r.before.wallMs) : '-', r.before ? fmt(r.before.cpuMs) : '-');
    table.push(row);
  }
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  const met = rows.filter((r) => r.initKb <= r.goalKb).length;
  const fast = rows.filter((r) => r.wallMs <= 60).length;
  console.log(`\n${met} of ${rows.length} within the size goal; ${fast} of ${rows.length} import in ≤ 60 ms (this run, this machine).`);
}
