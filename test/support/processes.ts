import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../local/ports.ts';

export { freePort };

/** Run a project script (TypeScript, through tsx) to completion, as `npm run` would. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Wait until no process of the group is left (the script shuts its children down after npm has gone). */
async function groupGone(pgid: number, timeoutMs = 20_000) {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    try {
      process.kill(-pgid, 0);
    } catch {
      return;
    }
  }
  throw new Error(`process group ${pgid} still running ${timeoutMs} ms after SIGINT`);
}

/** Start a long-running script and resolve once its output contains `ready`. */
export function startScript(script: string, env: NodeJS.ProcessEnv, ready: string, timeoutMs = 60_000) {
  return startCommand(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env } }, ready, timeoutMs);
}

/** Start a long-running command (e.g. `npm start` in a given folder) and resolve once its output contains `ready`. */
export function startCommand(
  command: string,
  args: string[],
  /** `group`: run in its own process group and stop it as Ctrl-C in a terminal does (SIGINT to the whole group, npm included). */
  opts: { env: NodeJS.ProcessEnv; cwd?: string; group?: boolean },
  ready: string,
  timeoutMs = 60_000,
): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<number | null> }> {
  const script = [command, ...args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd, detached: opts.group, stdio: ['ignore', 'pipe', 'pipe'] });
    const signal = (sig: NodeJS.Signals) => (opts.group && child.pid ? process.kill(-child.pid, sig) : child.kill(sig));
    let out = '';
    const timer = setTimeout(() => {
      signal('SIGKILL');
      reject(new Error(`${script} not ready in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve({
          child,
          output: () => out,
          stop: async () => {
            const code = await new Promise<number | null>((res) => {
              if (child.exitCode !== null) return res(child.exitCode);
              // npm itself dies of the SIGINT a terminal sends (no exit code); what matters is that its script exits cleanly.
              child.once('exit', (c, sig) => res(c ?? (opts.group && sig === 'SIGINT' ? 0 : null)));
              signal('SIGINT');
            });
            if (opts.group) await groupGone(child.pid!);
            return code;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited (${code}) before ready:\n${out}`));
    });
  });
}

/**
 * Send `signal` to a whole process group (as a crash or a terminal would) and
 * wait until none of its processes is left; the leader's exit code and signal.
 */
export async function signalGroup(child: ChildProcess, signal: NodeJS.Signals, timeoutMs = 30_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, sig) => resolve({ code, signal: sig }));
  });
  process.kill(-child.pid!, signal);
  for (const until = Date.now() + timeoutMs; ; await new Promise((r) => setTimeout(r, 50))) {
    try {
      process.kill(-child.pid!, 0);
    } catch {
      return exited;
    }
    if (Date.now() > until) throw new Error(`process group ${child.pid} still running ${timeoutMs} ms after ${signal}`);
  }
}
