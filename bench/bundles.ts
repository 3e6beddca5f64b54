/**
 * `BENCH_ONLY=bundles`: what each function ships and what its cold start
 * costs (issue 30, part 1). For each function of the template, from the
 * bundles the stack runs (local/lambda/build.ts, byte for byte the assets of
 * `cdk synth`):
 *
 *   - the entry file, what a cold start loads (the entry and the chunks it
 *     imports statically: infra/bundling.ts initFiles) against its goal, and
 *     what loads on first use (the other chunks);
 *   - the zod schemas its import builds (a count, test/support/schemas-at-init.ts),
 *     in a process of its own, apart from the timed runs;
 *   - a cold start in a fresh Node 24 process with exactly the environment the
 *     stack gave the function (NODE_OPTIONS=--enable-source-maps included): the
 *     import (init), wall and CPU ms, then one first request in the same process
 *     (bench/first-request.ts) against the bench stack: init + first request,
 *     median of RUNS (issue 42, part 1);
 *   - the floor, in the same rounds with the same environment: a handler doing
 *     one GetItem with the DocumentClient (bench/cold-floor.ts) bundled by
 *     bundleFunction as the functions are; each row's init and init + first
 *     request as a ratio to the floor's (its init + its GetItem);
 *   - with BENCH_BUNDLES_BEFORE=<dir> (a folder per entry as the local builder
 *     names them, e.g. a build of an earlier commit), the same figures for those
 *     bundles, run in turn with these so both see the same machine load.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BUNDLE_BUDGET_KB, BUNDLE_BUDGET_KB_BY_ENTRY, BUNDLE_FILE, bundleFunction, CHUNK_DIR, initBytes } from '../infra/bundling.ts';
import { PROJECT_ROOT } from '../infra/service-function.ts';
import type { Bundles } from '../local/lambda/build.ts';
import type { LocalLambda } from '../local/lambda/index.ts';
import { schemasAtInit } from '../test/support/schemas-at-init.ts';
import { firstRequests, floorRequest, type BenchAccount } from './first-request.ts';

const RUNS = Number(process.env.BENCH_BUNDLE_RUNS ?? 7);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (bytes: number) => (bytes / 1024).toFixed(0);

/** Bytes of every chunk of a bundle (loaded at a cold start or later). */
function allBytes(entryFile: string): number {
  const dir = join(entryFile, '..', CHUNK_DIR);
  const chunks = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.mjs')) : [];
  return statSync(entryFile).size + chunks.reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}

/** One cold start in a fresh process: the import, then (with an event) one call of the handler, as the process measures them. */
interface ColdStart {
  /** Wall and CPU ms of `import(file)`. */
  init: number;
  initCpu: number;
  /** Wall and CPU ms from the import's start to the handler's answer (the init alone when there was no event). */
  total: number;
  totalCpu: number;
  /** What the handler answered (`HTTP 200`, `0 of 1 failed`, ...) or threw. */
  outcome?: string;
}

const FAILED: ColdStart = { init: NaN, initCpu: NaN, total: NaN, totalCpu: NaN, outcome: 'FAILED' };
const MARK = '@@cold-start ';

/**
 * The child's script: read the event from stdin, then time the import and the call. The context is the local
 * runtime's (local/lambda/worker.mjs); what a handler leaves running is settled (its drain hooks) after the timing.
 */
const SCRIPT = `import { readFileSync } from 'node:fs';
const input = JSON.parse(readFileSync(0, 'utf8'));
const ms = (c) => (c.user + c.system) / 1000;
const c0 = process.cpuUsage(); const t0 = performance.now();
const mod = await import(input.url);
const init = performance.now() - t0; const initCpu = ms(process.cpuUsage(c0));
let outcome;
if ('event' in input) {
  const deadline = Date.now() + 30000;
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'floor';
  const context = { awsRequestId: crypto.randomUUID(), functionName: name, functionVersion: '$LATEST', invokedFunctionArn: 'arn:aws:lambda:' + process.env.AWS_REGION + ':000000000000:function:' + name,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '1024', logGroupName: '/aws/lambda/' + name, logStreamName: 'local', callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()), done() {}, fail() {}, succeed() {} };
  try {
    const r = await mod.handler(input.event, context);
    outcome = r?.statusCode ? 'HTTP ' + r.statusCode : Array.isArray(r?.batchItemFailures) ? r.batchItemFailures.length + ' of ' + input.event.Records.length + ' failed' : r?.principalId ? 'allowed, ' + (r.context?.authError ? 'refused' : 'known key') : 'returned';
  } catch (err) {
    outcome = 'threw ' + (err?.name ?? 'Error') + ': ' + String(err?.message).slice(0, 60);
  }
}
const total = performance.now() - t0; const totalCpu = ms(process.cpuUsage(c0));
await Promise.allSettled([...(globalThis[Symbol.for('support-desk.drain')] ?? [])].map((settle) => settle()));
process.stdout.write('${MARK}' + JSON.stringify({ init, initCpu, total, totalCpu, outcome }) + '\\n');
process.exit(0);`;

/**
 * A cold start of a bundle in a fresh Node process with `env`: the import, then one call with `event` if given.
 * Asynchronous: the call reaches the stack's emulators, which run in this process.
 */
function coldStart(file: string, env: Record<string, string>, event?: unknown): Promise<ColdStart> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith(MARK));
      resolve(code === 0 && line ? JSON.parse(line.slice(MARK.length)) : FAILED);
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(JSON.stringify({ url: pathToFileURL(file).href, ...(event === undefined ? {} : { event }) }));
  });
}

/** Medians of a function's cold starts. */
export interface ColdFigures {
  /** Import wall and CPU ms. */
  wallMs: number;
  cpuMs: number;
  /** The first call alone, and the import with it (median of each process's sum), wall ms. */
  firstMs: number;
  initFirstMs: number;
  /** CPU ms of the import with the first call (less sensitive to this shared machine's load than wall time). */
  initFirstCpuMs: number;
  outcome?: string;
}

const figures = (xs: ColdStart[]): ColdFigures => ({
  wallMs: median(xs.map((x) => x.init)),
  cpuMs: median(xs.map((x) => x.initCpu)),
  firstMs: median(xs.map((x) => x.total - x.init)),
  initFirstMs: median(xs.map((x) => x.total)),
  initFirstCpuMs: median(xs.map((x) => x.totalCpu)),
  // The most frequent answer (one odd run shows as 'mixed').
  outcome: new Set(xs.map((x) => x.outcome)).size === 1 ? xs[0].outcome : `mixed: ${[...new Set(xs.map((x) => x.outcome))].join(' / ')}`,
});

export interface BundleRow extends ColdFigures {
  name: string;
  entry: string;
  memoryMb: number;
  entryKb: number;
  initKb: number;
  lazyKb: number;
  goalKb: number;
  /** zod schemas built by the import (a count, in a process of its own, outside the timed runs). */
  schemas: number;
  /** What the first request was (bench/first-request.ts). */
  first?: string;
  before?: ColdFigures & { initKb: number; schemas: number };
}

export interface BundlesBench {
  rows: BundleRow[];
  /** The floor (bench/cold-floor.ts): its KB and cold starts, measured in the same rounds. */
  floor: ColdFigures & { initKb: number; first: string };
}

/** Where the floor's bundle is written (build output). */
const FLOOR_DIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'cold-floor');

export async function benchBundles(opts: { lambda: LocalLambda; bundles: Bundles; account: BenchAccount; beforeDir?: string }): Promise<BundlesBench> {
  const { lambda, bundles } = opts;
  const before = opts.beforeDir;
  const defs = [...lambda.deployment.functions.values()].sort((a, b) => a.name.localeCompare(b.name));
  // The floor, bundled as every function is, with the environment of an API function (NODE_OPTIONS included).
  rmSync(FLOOR_DIR, { recursive: true, force: true });
  bundleFunction('bench/cold-floor.ts', FLOOR_DIR);
  const floorFile = join(FLOOR_DIR, BUNDLE_FILE);
  const floorEnv = lambda.environment(defs.find((d) => d.name === 'Group-tickets')!.logicalId);
  const floorCall = floorRequest(opts.account);
  const calls = await firstRequests(lambda, opts.account);

  // Rounds: in each, the floor, then every function (and its earlier build), so a load that comes and goes on this
  // shared machine falls on all of them alike.
  const floorRuns: ColdStart[] = [];
  const now = new Map<string, ColdStart[]>(defs.map((d) => [d.logicalId, []]));
  const then = new Map<string, ColdStart[]>(defs.map((d) => [d.logicalId, []]));
  let n = 0;
  for (let i = 0; i < RUNS; i++) {
    for (const [k, def] of defs.entries()) {
      // The floor twice a round, at its start and half-way: it is the yardstick of every row.
      if (k % Math.ceil(defs.length / 2) === 0) floorRuns.push(await coldStart(floorFile, floorEnv, floorCall.event(floorRuns.length)));
      const file = bundles.file(def.entry);
      const env = lambda.environment(def.logicalId);
      const call = calls.get(def.logicalId);
      const old = before ? join(before, file.slice(bundles.dir.length)) : undefined;
      // With an earlier build, the two in turn, the first of the pair alternating by round (no order effect).
      const pair = [() => coldStart(file, env, call?.event(n++)).then((x) => now.get(def.logicalId)!.push(x))];
      if (old && existsSync(old)) pair.push(() => coldStart(old, env, call?.event(n++)).then((x) => then.get(def.logicalId)!.push(x)));
      for (const run of i % 2 ? pair.reverse() : pair) await run();
    }
  }
  // What each import builds, counted apart from the timed runs (the count's hook would add its own calls to them).
  const schemas = new Map<string, number>();
  const count = (file: string, env: Record<string, string>) =>
    schemasAtInit(file, env).then(
      (r) => r.schemas,
      () => NaN,
    );
  for (const def of defs) {
    const file = bundles.file(def.entry);
    const old = before ? join(before, file.slice(bundles.dir.length)) : undefined;
    schemas.set(def.logicalId, await count(file, lambda.environment(def.logicalId)));
    if (old && existsSync(old)) schemas.set(`before:${def.logicalId}`, await count(old, lambda.environment(def.logicalId)));
  }
  const rows = defs.map((def): BundleRow => {
    const file = bundles.file(def.entry);
    const init = initBytes(file);
    const old = before ? join(before, file.slice(bundles.dir.length)) : undefined;
    const earlier = then.get(def.logicalId)!;
    return {
      name: def.name,
      entry: def.entry,
      memoryMb: def.memoryMb,
      entryKb: statSync(file).size / 1024,
      initKb: init / 1024,
      lazyKb: (allBytes(file) - init) / 1024,
      goalKb: BUNDLE_BUDGET_KB_BY_ENTRY[def.entry] ?? BUNDLE_BUDGET_KB,
      schemas: schemas.get(def.logicalId)!,
      first: calls.get(def.logicalId)?.what,
      ...figures(now.get(def.logicalId)!),
      ...(earlier.length ? { before: { initKb: initBytes(old!) / 1024, schemas: schemas.get(`before:${def.logicalId}`) ?? NaN, ...figures(earlier) } } : {}),
    };
  });
  return { rows, floor: { initKb: initBytes(floorFile) / 1024, first: floorCall.what, ...figures(floorRuns) } };
}

const f0 = (n: number) => (Number.isFinite(n) ? n.toFixed(0) : 'FAILED');
const x2 = (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '-');

/** The per-function table as `npm run bench` prints it (and docs/performance.md keeps it). */
export function printBundles({ rows, floor }: BundlesBench): void {
  const withBefore = rows.some((r) => r.before);
  console.log(
    `\nFunction bundles (issues 30 and 42): KB a cold start loads (entry file and its static chunks; goal ≤ 300, messages and email inbound ≤ 400), KB loaded on first use, the zod schemas the import builds (test/support/schemas-at-init.ts), and cold starts in a fresh Node process with the function's environment (median of ${RUNS}, in rounds with the floor): the import (init), and the import with one first request (bench/first-request.ts), each against the floor's (bench/cold-floor.ts: one GetItem with the DocumentClient, bundled the same way).\n`,
  );
  console.log(
    `Floor: ${kb(floor.initKb * 1024)} KB; init ${f0(floor.wallMs)} ms (CPU ${f0(floor.cpuMs)}); first call (${floor.first}) ${f0(floor.firstMs)} ms; init + first call ${f0(floor.initFirstMs)} ms (CPU ${f0(floor.initFirstCpuMs)}; ${floor.outcome}).\n`,
  );
  // A median over no function (none loads less than before, say) prints as '-', not a crash that loses the run.
  const mid = (xs: number[]) => (xs.length ? median(xs).toFixed(2) : '-');
  if (withBefore) {
    const both = rows.filter((r) => r.before);
    console.log(
      `Now against the earlier build, medians over functions of now/before: init ${mid(both.map((r) => r.wallMs / r.before!.wallMs))} (CPU ${mid(both.map((r) => r.cpuMs / r.before!.cpuMs))}), init + first request ${mid(both.map((r) => r.initFirstMs / r.before!.initFirstMs))} (CPU ${mid(both.map((r) => r.initFirstCpuMs / r.before!.initFirstCpuMs))}); where a cold start loads less: ${mid(both.filter((r) => r.initKb < r.before!.initKb).map((r) => r.cpuMs / r.before!.cpuMs))} init CPU over ${both.filter((r) => r.initKb < r.before!.initKb).length} functions.\n`,
    );
  }
  const head = [
    'function',
    'cold-start KB',
    'goal',
    'on first use KB',
    'schemas',
    'init ms',
    '× floor',
    'CPU ms',
    '× floor',
    'first request',
    'answer',
    'first ms',
    'init + first ms',
    "× floor's",
    'CPU',
    '× floor',
  ];
  if (withBefore) head.push('before: KB', 'schemas', 'init ms', 'CPU ms', 'init + first ms', 'CPU');
  const table = [head];
  for (const r of rows) {
    const row = [
      r.name,
      kb(r.initKb * 1024),
      `${r.initKb <= r.goalKb ? '≤' : '>'} ${r.goalKb}`,
      kb(r.lazyKb * 1024),
      f0(r.schemas),
      f0(r.wallMs),
      x2(r.wallMs / floor.wallMs),
      f0(r.cpuMs),
      x2(r.cpuMs / floor.cpuMs),
      r.first ?? '-',
      r.outcome ?? '-',
      f0(r.firstMs),
      f0(r.initFirstMs),
      x2(r.initFirstMs / floor.initFirstMs),
      f0(r.initFirstCpuMs),
      x2(r.initFirstCpuMs / floor.initFirstCpuMs),
    ];
    const b = r.before;
    if (withBefore) row.push(...(b ? [kb(b.initKb * 1024), f0(b.schemas), f0(b.wallMs), f0(b.cpuMs), f0(b.initFirstMs), f0(b.initFirstCpuMs)] : ['-', '-', '-', '-', '-', '-']));
    table.push(row);
  }
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i].length)));
  for (const r of table) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
  const met = rows.filter((r) => r.initKb <= r.goalKb).length;
  const fast = rows.filter((r) => r.wallMs <= 60).length;
  console.log(`\n${met} of ${rows.length} within the size goal; ${fast} of ${rows.length} import in ≤ 60 ms (this run, this machine).`);
}

/** Median and largest of ratios, and how many are over `over`. */
function spread(ratios: Array<{ name: string; ratio: number }>, over: number) {
  const ok = ratios.filter((r) => Number.isFinite(r.ratio));
  const max = ok.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  return { median: median(ok.map((r) => r.ratio)), max, over: ok.filter((r) => r.ratio > over).length, failed: ratios.length - ok.length, count: ratios.length };
}

/** Issue 42's cold-start rows of the goals table: init, and init + first request, against the floor's, in this run. */
export function coldStartGoals({ rows, floor }: BundlesBench) {
  const row = (measure: string, key: 'wallMs' | 'initFirstMs', cpu: 'cpuMs' | 'initFirstCpuMs', of: BundleRow[]) => {
    const s = spread(
      of.map((r) => ({ name: r.name, ratio: r[key] / floor[key] })),
      1.3,
    );
    const c = median(of.map((r) => r[cpu] / floor[cpu]));
    return {
      measure,
      figure: `median ${s.median.toFixed(2)}×, max ${s.max.ratio.toFixed(2)}× (${s.max.name}), ${s.over} of ${s.count} over 1.3×${s.failed ? `, ${s.failed} FAILED` : ''}; floor ${floor[key].toFixed(0)} ms; CPU median ${c.toFixed(2)}×`,
      ratio: `${s.median.toFixed(2)}×`,
      goal: 'median ≤ 1.0×, none over 1.3×',
      met: s.failed === 0 && s.median <= 1 && s.over === 0,
    };
  };
  return [
    row('init vs floor (bare GetItem handler), every function', 'wallMs', 'cpuMs', rows),
    row(
      "init + first request vs floor's init + GetItem, every function",
      'initFirstMs',
      'initFirstCpuMs',
      rows.filter((r) => r.first),
    ),
  ];
}
