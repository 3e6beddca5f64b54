import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Where the last whole `npm test` of this checkout is recorded (the bench prints it beside the suite's goal, issue 42). */
export const RUN_RECORD = join(resolve(import.meta.dirname, '../..'), 'node_modules', '.cache', 'support-desk', 'last-test-run.json');

export interface RunRecord {
  finishedAt: string;
  commit: string;
  seconds: number;
  files: number;
  tests: number;
  failed: number;
  /** Functions the run's setup bundled itself (all 37 on a fresh clone; none after `cdk synth` or an earlier run). */
  bundled?: number;
}

/** Where the global setup (same process as the reporter, another module instance) leaves how many functions it bundled. */
export const BUNDLED_BY_SETUP = Symbol.for('support-desk.test-run.bundled');

/**
 * Records the wall time of a whole run (`npm test`, `vitest run` with no file or project filter), from the
 * reporter's start to the last result: the suite's figure the bench reports, measured where it happens instead of
 * by running the suite again inside the bench. A filtered run records nothing.
 */
export class RunRecorder implements Reporter {
  /** The config (and this reporter) is loaded as the run starts. */
  private readonly started = Date.now();
  /** No file, name, project, shard or change filter on the command line (reporters and the like do not narrow it). */
  private readonly whole = process.argv.slice(2).every((a) => a === 'run' || (a.startsWith('--') && !/^--(project|testNamePattern|shard|changed|related|dir|exclude)\b/.test(a)));

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: string) {
    if (!this.whole || reason === 'interrupted') return;
    const results = modules.flatMap((m) => [...m.children.allTests()].map((t) => t.result().state));
    const record: RunRecord = {
      finishedAt: new Date().toISOString(),
      commit: headCommit(),
      seconds: Math.round((Date.now() - this.started) / 1000),
      files: modules.length,
      tests: results.length,
      failed: results.filter((s) => s === 'failed').length,
      bundled: (globalThis as Record<symbol, number | undefined>)[BUNDLED_BY_SETUP],
    };
    mkdirSync(dirname(RUN_RECORD), { recursive: true });
    writeFileSync(RUN_RECORD, JSON.stringify(record, null, 2));
  }
}

/** The checkout's commit; a copy without git (a downloaded archive) records none rather than failing the run. */
function headCommit(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

export function readRunRecord(): RunRecord | undefined {
  try {
    return JSON.parse(readFileSync(RUN_RECORD, 'utf8')) as RunRecord;
  } catch {
    return undefined;
  }
}
