/**
 * One variant's measurement, in a process of its own (run.ts starts one per
 * variant and round): N TransactWrite (create contact), then N GetItem, then N
 * Query (page of 25 on gsi1), each call awaited before the next, on a fresh
 * table. Each phase first runs WARMUP calls that are not counted, so the
 * figures are the steady state of a warm function, not its first calls.
 *
 * Prints one JSON line: per phase, Node CPU (user + system) and wall time.
 */
import { contactNo, documentClient } from './common.ts';
import { createTable, deleteTable } from './table.ts';
import { loadVariant, type VariantName } from './variants/index.ts';

const [name, endpoint, nArg, warmArg] = process.argv.slice(2) as [VariantName, string, string, string];
const N = Number(nArg);
const WARMUP = Number(warmArg);
/** Pages walked before the list starts again from the top: never its end, so every call reads a full page. */
const WALK = Math.floor(N / 25 / 2);

const table = `bench_${name}_${process.pid}`;
await createTable(endpoint, table);
const ddb = documentClient(endpoint);
const v = await loadVariant(name, ddb, table);

interface Phase {
  calls: number;
  cpuUs: number;
  wallMs: number;
  /** CPU µs per call of each of BATCHES consecutive slices: on a shared machine their median shows what a burst of other load did to the total. */
  batchCpuUsPerCall: number[];
}

const BATCHES = 20;

async function measure(calls: number, warmup: number, call: (i: number) => Promise<void>): Promise<Phase> {
  for (let i = 0; i < warmup; i++) await call(-1 - i);
  const batchCpuUsPerCall: number[] = [];
  const size = Math.ceil(calls / BATCHES);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let mark = cpu0;
  for (let i = 0; i < calls; i++) {
    await call(i);
    if ((i + 1) % size === 0 || i === calls - 1) {
      const now = process.cpuUsage();
      batchCpuUsPerCall.push((now.user + now.system - mark.user - mark.system) / ((i % size) + 1));
      mark = now;
    }
  }
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { calls, cpuUs: cpu.user + cpu.system, wallMs, batchCpuUsPerCall };
}

const ACCOUNT = 'acc_bench';
const results: Record<string, Phase> = {};

// Warm-up creates go to another account, so the measured list holds exactly the N measured contacts.
results.transactWrite = await measure(N, WARMUP, (i) => v.createContact(contactNo(i < 0 ? 'acc_warm' : ACCOUNT, Math.abs(i))));

const ids = Array.from({ length: N }, (_, i) => contactNo(ACCOUNT, i).id);
results.getItem = await measure(N, WARMUP, async (i) => {
  const found = await v.getContact(ACCOUNT, ids[(i + N) % N]);
  if (!found || found.id !== ids[(i + N) % N]) throw new Error(`${name}: get ${i} found ${JSON.stringify(found)}`);
});

let cursor: unknown;
let walked = 0;
results.query = await measure(N, WARMUP, async () => {
  if (walked === WALK) [cursor, walked] = [undefined, 0];
  const page = await v.listByName(ACCOUNT, 25, cursor);
  if (page.items.length !== 25 || !page.cursor) throw new Error(`${name}: page ${walked} had ${page.items.length} items`);
  cursor = page.cursor;
  walked++;
});

ddb.destroy();
await deleteTable(endpoint, table);
process.stdout.write(`${JSON.stringify({ variant: name, pid: process.pid, loadavg: (await import('node:os')).loadavg(), results })}\n`);
