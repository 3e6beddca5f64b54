/**
 * Issue #19: before the project adopts a single-table DynamoDB library, ElectroDB
 * and DynamoDB-Toolbox v2 against today's data layer, on the same contact:
 *
 * 1. Node CPU and wall time per call of 10,000 TransactWrite (contact Put
 *    absent + email guard Put absent + list counter ADD), 10,000 GetItem and
 *    10,000 Query (page of 25 on gsi1), sequential, each variant in a fresh
 *    process (worker.ts), the whole order run twice to show the noise;
 * 2. whether each expresses our conditional transactions and maps a
 *    cancellation's failed index to our domain error (expressiveness.ts);
 * 3. the minified bundle of a tiny handler using each, built with the
 *    project's own esbuild options (infra/bundling.ts).
 *
 * Run from the repository root, after `npm ci` there and in this folder:
 *   node --import tsx bench/data-layer-libraries/run.ts
 * BENCH_CALLS (10000), BENCH_WARMUP (500) and BENCH_ROUNDS (2) change the sizes.
 * It starts its own in-memory DynamoDB Local (local/dynamodb-local.ts) and
 * writes results.json beside this file.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startDynamoDbLocal } from '../../local/dynamodb-local.ts';
import { freePort } from '../../local/ports.ts';
import { checkExpressiveness } from './expressiveness.ts';
import { VARIANTS, type VariantName } from './variants/index.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 10_000);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const OPS = ['getItem', 'query', 'transactWrite'] as const;
type Op = (typeof OPS)[number];
/** The issue's rule: adopt only under 20% more CPU per call than today's layer, and only if it expresses all of it. */
const MAX_CPU_RATIO = 1.2;

interface Phase {
  calls: number;
  cpuUs: number;
  wallMs: number;
  batchCpuUsPerCall: number[];
}
interface WorkerResult {
  variant: VariantName;
  round: number;
  loadavgBefore: number[];
  loadavg: number[];
  results: Record<Op, Phase>;
}

const log = (m: string) => process.stderr.write(`${m}\n`);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function runWorker(variant: VariantName, endpoint: string): Promise<Omit<WorkerResult, 'round' | 'loadavgBefore'>> {
  return new Promise((resolve, reject) => {
    // The parent's own flags (`--import tsx`), so the child loads TypeScript the same way.
    const child = spawn(process.execPath, [...process.execArgv, join(import.meta.dirname, 'worker.ts'), variant, endpoint, String(CALLS), String(WARMUP)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`${variant} worker exited ${code}`))));
  });
}

/** The handler entry bundled as infra/bundling.ts bundles every function (SDK bundled), and again with the SDK left out (what the library itself adds). */
async function bundleSizes() {
  const esbuild = await import('esbuild');
  const { esbuildOptions } = await import('../../infra/bundling.ts');
  const out: Record<string, { projectOptionsKB: number; projectOptionsGzipKB: number; sdkExternalKB: number }> = {};
  for (const v of VARIANTS) {
    const entry = join(import.meta.dirname, 'entries', `${v}.ts`);
    const sizes: number[] = [];
    let gz = 0;
    for (const sdkExternal of [false, true]) {
      const dir = mkdtempSync(join(tmpdir(), `dll-bundle-${v}-`));
      const options = esbuildOptions(entry, dir);
      await esbuild.build({ ...options, ...(sdkExternal ? { external: [...options.external, '@aws-sdk/*', '@smithy/*'] } : {}) });
      const file = join(dir, 'index.mjs');
      sizes.push(statSync(file).size / 1024);
      if (!sdkExternal) gz = gzipSync(readFileSync(file)).length / 1024;
      rmSync(dir, { recursive: true, force: true });
    }
    out[v] = { projectOptionsKB: sizes[0], projectOptionsGzipKB: gz, sdkExternalKB: sizes[1] };
  }
  return out;
}

const startedAt = new Date().toISOString();
const loadStart = loadavg();
log(`data-layer-libraries: ${CALLS} calls per operation, ${WARMUP} warm-up, ${ROUNDS} rounds; loadavg ${loadStart.map((l) => l.toFixed(2)).join(' ')}`);
const dynamo = await startDynamoDbLocal(await freePort());
const runs: WorkerResult[] = [];
let expressiveness;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const v of VARIANTS) {
      const loadavgBefore = loadavg();
      const t0 = Date.now();
      const r = await runWorker(v, dynamo.endpoint);
      runs.push({ ...r, round, loadavgBefore });
      log(
        `round ${round} ${v.padEnd(9)} ${OPS.map((op) => `${op} ${(r.results[op].cpuUs / r.results[op].calls).toFixed(0)} µs CPU`).join(', ')} (${((Date.now() - t0) / 1000).toFixed(0)} s, loadavg ${r.loadavg.map((l) => l.toFixed(2)).join(' ')})`,
      );
    }
  }
  expressiveness = await checkExpressiveness(dynamo.endpoint, VARIANTS);
} finally {
  await dynamo.stop();
}
const bundles = await bundleSizes();
const loadEnd = loadavg();

// Per variant and operation: CPU µs per call over all rounds (total CPU / total calls), each round's, the median slice, wall µs per call.
const summary = Object.fromEntries(
  VARIANTS.map((v) => {
    const mine = runs.filter((r) => r.variant === v);
    return [
      v,
      Object.fromEntries(
        OPS.map((op) => {
          const phases = mine.map((r) => r.results[op]);
          const calls = phases.reduce((s, p) => s + p.calls, 0);
          return [
            op,
            {
              cpuUsPerCall: phases.reduce((s, p) => s + p.cpuUs, 0) / calls,
              cpuUsPerCallByRound: phases.map((p) => p.cpuUs / p.calls),
              medianSliceCpuUsPerCall: median(phases.flatMap((p) => p.batchCpuUsPerCall)),
              wallUsPerCall: (phases.reduce((s, p) => s + p.wallMs, 0) * 1000) / calls,
            },
          ];
        }),
      ),
    ];
  }),
) as Record<VariantName, Record<Op, { cpuUsPerCall: number; cpuUsPerCallByRound: number[]; medianSliceCpuUsPerCall: number; wallUsPerCall: number }>>;

const verdicts = Object.fromEntries(
  VARIANTS.filter((v) => v !== 'today').map((v) => {
    const ratios = Object.fromEntries(OPS.map((op) => [op, summary[v][op].cpuUsPerCall / summary.today[op].cpuUsPerCall]));
    const e = expressiveness.find((x) => x.variant === v)!;
    const expresses = !e.error && e.scenarios.length > 0 && e.scenarios.every((s) => s.ok) && e.counterAfter === 1;
    const cpuOk = Object.values(ratios).every((r) => r < MAX_CPU_RATIO);
    return [v, { ratios, cpuOk, expresses, adopt: cpuOk && expresses }];
  }),
);

const f0 = (n: number) => n.toFixed(0);
const lines = [
  `| variant | GetItem CPU µs/call | Query CPU µs/call | TransactWrite CPU µs/call | wall µs/call (Get / Query / Tx) | bundle KB (project options; gzip) | bundle KB, SDK external |`,
  `| --- | --- | --- | --- | --- | --- | --- |`,
  ...VARIANTS.map((v) => {
    const s = summary[v];
    const cell = (op: Op) =>
      `${f0(s[op].cpuUsPerCall)}${v === 'today' ? '' : ` (×${(s[op].cpuUsPerCall / summary.today[op].cpuUsPerCall).toFixed(2)})`} [rounds ${s[op].cpuUsPerCallByRound.map(f0).join(', ')}; median slice ${f0(s[op].medianSliceCpuUsPerCall)}]`;
    const b = bundles[v];
    return `| ${v} | ${cell('getItem')} | ${cell('query')} | ${cell('transactWrite')} | ${OPS.map((op) => f0(s[op].wallUsPerCall)).join(' / ')} | ${b.projectOptionsKB.toFixed(1)}; ${b.projectOptionsGzipKB.toFixed(1)} | ${b.sdkExternalKB.toFixed(1)} |`;
  }),
];
console.log(lines.join('\n'));
console.log();
for (const e of expressiveness) {
  console.log(`${e.variant}: ${e.error ? `ERROR ${e.error}` : e.scenarios.map((s) => `${s.ok ? 'ok' : 'FAIL'} ${s.got} [${s.codes.join(',')}]`).join('; ')}`);
  console.log(
    `  items vs today's: contact ${e.itemDiff.contact.join(' ') || 'same'}; guard ${e.itemDiff.guard.join(' ') || 'same'}; counter ${e.itemDiff.counter.join(' ') || 'same'}; reads today's items: ${JSON.stringify(e.readsTodaysItems)}`,
  );
}
console.log();
for (const [v, d] of Object.entries(verdicts)) {
  console.log(`${v}: CPU ${OPS.map((op) => `${op} ×${d.ratios[op].toFixed(2)}`).join(', ')} -> ${d.cpuOk ? 'under' : 'NOT under'} ×${MAX_CPU_RATIO}; expresses all: ${d.expresses}; adopt: ${d.adopt}`);
}
console.log(`loadavg at start ${loadStart.map((l) => l.toFixed(2)).join(' ')}, at end ${loadEnd.map((l) => l.toFixed(2)).join(' ')}`);

writeFileSync(
  join(import.meta.dirname, 'results.json'),
  `${JSON.stringify({ startedAt, calls: CALLS, warmup: WARMUP, rounds: ROUNDS, node: process.version, loadavg: { start: loadStart, end: loadEnd }, summary, verdicts, bundles, expressiveness, runs }, null, 2)}\n`,
);
