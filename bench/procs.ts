/**
 * CPU time of processes, read from /proc as the issue measures it (issue 21):
 * utime + stime of /proc/<pid>/stat, which for a process covers all of its
 * threads (the local stack's function workers are threads of its process,
 * the JVM's threads are its own). Linux only.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICK_MS = (() => {
  try {
    return 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  } catch {
    return 10;
  }
})();

interface Stat {
  comm: string;
  ppid: number;
  /** utime + stime, ms. */
  cpuMs: number;
}

/** A process's name, parent and CPU time so far; undefined once it is gone. */
function stat(pid: number): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // comm is in parentheses and may itself hold spaces or parentheses: the fields follow the last ')'.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  // After comm: state(3) ppid(4) ... utime(14) stime(15), so index = field number - 3.
  return { comm: text.slice(text.indexOf('(') + 1, close), ppid: Number(fields[1]), cpuMs: (Number(fields[11]) + Number(fields[12])) * TICK_MS };
}

/** The file a process runs (`node`, `java`, `esbuild`...), by its executable rather than its thread name. */
const program = (pid: number) => {
  try {
    return basename(readlinkSync(`/proc/${pid}/exe`));
  } catch {
    return '';
  }
};

/** `root` and every process below it, with the program each runs. */
export function processTree(root: number): Array<{ pid: number; program: string }> {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      const s = stat(Number(d));
      return s ? [{ pid: Number(d), ...s }] : [];
    });
  const found = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all)
      if (!found.has(p.pid) && found.has(p.ppid)) {
        found.add(p.pid);
        grew = true;
      }
  }
  return all.filter((p) => found.has(p.pid)).map(({ pid, comm }) => ({ pid, program: program(pid) || comm }));
}

/** Total CPU time (ms) of `pids` so far; a process that has gone counts 0. */
export const cpuMs = (pids: number[]) => pids.reduce((sum, pid) => sum + (stat(pid)?.cpuMs ?? 0), 0);

/** Named groups of processes, read together. */
export type Groups<K extends string> = Record<K, number[]>;
export type Reading<K extends string> = { at: number } & Record<K, number>;

/** CPU time of each group (ms) and the time of the reading (performance.now()). */
export function readCpu<K extends string>(groups: Groups<K>): Reading<K> {
  const out = { at: performance.now() } as Reading<K>;
  for (const k of Object.keys(groups) as K[]) (out as Record<K, number>)[k] = cpuMs(groups[k]);
  return out;
}

/** CPU rate of each group between two readings, in ms of CPU per second. */
export function cpuRate<K extends string>(from: Reading<K>, to: Reading<K>): Record<K, number> {
  const seconds = (to.at - from.at) / 1000;
  const out = {} as Record<K, number>;
  for (const k of Object.keys(from).filter((x) => x !== 'at') as K[]) out[k] = (to[k] - from[k]) / seconds;
  return out;
}

/**
 * A Node process's CPU time (ms) by kind of thread, from /proc/<pid>/task:
 * the main thread (in the local stack: the gateway, the pipeline's pollers,
 * the bus and fauxqs), the worker_threads (the stack's functions), and the
 * rest (V8's GC and compiler helpers, libuv's pool). Threads that have ended
 * are not counted here (their time stays in the process's total).
 */
export function threadCpuMs(pid: number): { main: number; workers: number; other: number } {
  const out = { main: 0, workers: 0, other: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const close = text.lastIndexOf(')');
    const fields = text.slice(close + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) * TICK_MS;
    const comm = text.slice(text.indexOf('(') + 1, close);
    // Node names its main thread MainThread and an unnamed worker_threads Worker "WorkerThread".
    if (Number(tid) === pid) out.main += ms;
    else if (comm.startsWith('WorkerThread')) out.workers += ms;
    else out.other += ms;
  }
  return out;
}
