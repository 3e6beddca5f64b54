import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from '../../local/ports.ts';

export { freePort };


/** Run a project script (TypeScript, through tsx) to completion, as `npm run` would. */
export function runScript(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Start a long-running script and resolve once its output contains `ready`. */
export function startScript(script: string, env: NodeJS.ProcessEnv, ready: string, timeoutMs = 60_000): Promise<{ child: ChildProcess; output: () => string; stop: () => Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} not ready in ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d;
      if (out.includes(ready)) {
        clearTimeout(timer);
        resolve({
          child,
          output: () => out,
          stop: () =>
            new Promise((res) => {
              if (child.exitCode !== null) return res(child.exitCode);
              child.once('exit', (code) => res(code));
              child.kill('SIGINT');
            }),
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
