import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKGROUND_NICE } from '../../local/stack.ts';
import { freePort, runScript, startCommand } from '../support/processes.ts';

/**
 * A fresh clone of this commit, as a new user gets it (`git clone`; the
 * installed packages stand in for `npm ci`), so `npm start` runs exactly
 * as the README says: from the clone's folder, with no DATA_DIR.
 * Its node_modules is a folder of its own holding a link to each installed
 * package, without the build cache (node_modules/.cache): as after `npm ci`,
 * the clone starts with no bundles, and its build never replaces the
 * checkout's record of its own (with node_modules shared, it did, and the
 * run's next `npm start` or size-budget check in the checkout bundled every
 * function again).
 */
const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'sd-clone-'));
const clone = join(work, 'support-desk');
beforeAll(() => {
  const head = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
  execFileSync('git', ['clone', '--quiet', '--no-checkout', '--shared', root, clone]);
  execFileSync('git', ['checkout', '--quiet', head], { cwd: clone });
  const installed = realpathSync(join(root, 'node_modules'));
  mkdirSync(join(clone, 'node_modules'));
  for (const name of readdirSync(installed).filter((n) => n !== '.cache')) symlinkSync(join(installed, name), join(clone, 'node_modules', name));
});
/** Process groups started here: killed at the end even if a test fails before stopping them. */
const groups: number[] = [];
afterAll(() => {
  for (const pid of groups) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  rmSync(work, { recursive: true, force: true });
});

/** The environment of a new user's shell: ports picked for the test, and nothing of ours (no DATA_DIR). */
async function settings() {
  const { DATA_DIR: _d, ...inherited } = process.env;
  return { ...inherited, PORT: String(await freePort()), DYNAMODB_PORT: String(await freePort()), SMTP_PORT: String(await freePort()), LOG_LEVEL: 'silent' };
}

async function npmStart(env: NodeJS.ProcessEnv) {
  // A first start in a fresh clone synthesizes the template and bundles every function cold (as after `npm ci`): a
  // minute on a quiet 2-core machine, and past 150 s when a full run shares it with a bench. The bound is there to
  // end a start that hangs, not to time one.
  const started = await startCommand('npm', ['start'], { env, cwd: clone, group: true }, 'Press Ctrl-C', 240_000);
  groups.push(started.child.pid!);
  return started;
}
const admin = (env: NodeJS.ProcessEnv, ...args: string[]) => runScript('scripts/admin.ts', args, env, clone);

/**
 * The nice value of each thread of `npm start`'s Node process (the one running scripts/start.ts in the process group
 * `group`), from /proc (Linux): its main thread's, and every thread's.
 */
function stackThreadNice(group: number): { main: number; threads: number[] } {
  // A stat line's fields after the command's closing parenthesis: state, ppid, pgrp (2), ... nice (16).
  const stat = (path: string) => readFileSync(path, 'utf8').split(') ')[1].split(' ');
  const pid = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .find((d) => {
      try {
        // The script as an argument of its own: node's, not the `sh -c` line npm runs it with.
        return Number(stat(`/proc/${d}/stat`)[2]) === group && readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0').includes('scripts/start.ts');
      } catch {
        return false; // gone meanwhile
      }
    })!;
  const nice = (tid: string) => Number(stat(`/proc/${pid}/task/${tid}/stat`)[16]);
  return { main: nice(pid), threads: readdirSync(`/proc/${pid}/task`).map(nice) };
}

/** The curl line `npm start` prints, run as fetch: same URL, same header. */
async function runPrintedCurl(output: string) {
  const line = output.split('\n').find((l) => l.trim().startsWith('curl '))!;
  const [, header, url] = /-H "([^"]+)" (\S+)/.exec(line)!;
  const [name, value] = header.split(': ');
  return fetch(url, { headers: { [name]: value } });
}

describe('npm start and the admin CLI', () => {
  it('`npm start` in a fresh clone with no DATA_DIR starts the stack with a demo account, prints a working curl line, and keeps data across restarts', async () => {
    const env = await settings();
    const first = await npmStart(env);
    // The default data folder is the clone's .data, wherever DynamoDB Local runs from.
    expect(existsSync(join(clone, '.data', 'dynamodb'))).toBe(true);
    let accountLine: string;
    try {
      expect((await fetch(`http://localhost:${env.PORT}/health`)).status).toBe(200);
      // No fault is injected unless asked for (decisions §19), and the start lines say so.
      expect(first.output()).toMatch(/^Faults: none$/m);
      // The SMTP server of the inbound domain (decisions §17) listens on SMTP_PORT, and the line says where mail goes.
      expect(first.output()).toMatch(new RegExp(`SMTP \\(inbound\\):\\s+localhost:${env.SMTP_PORT}\\s+mail to acct_[0-9a-z]{26}@inbound\\.localhost `));
      const res = await runPrintedCurl(first.output());
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ role: 'owner', email: 'owner@demo.example' });
      const session = /Session token:\s+(\S+)/.exec(first.output())![1];
      const me = await fetch(`http://localhost:${env.PORT}/playbook/api/v1/users/me`, { headers: { Authorization: `Bearer ${session}` } });
      expect(me.status).toBe(200);
      if (process.platform === 'linux') {
        // The API's functions (the authorizer and the users group have run) below the main thread (localPriority, local/stack.ts).
        const nice = stackThreadNice(first.child.pid!);
        expect(nice.main).toBe(0);
        expect(nice.threads.filter((n) => n === BACKGROUND_NICE).length).toBeGreaterThanOrEqual(2);
      }
      accountLine = /Demo account:\s+(\S+)/.exec(first.output())![1];

      // The admin CLI works against the running stack with the same environment.
      const created = await admin(env, 'create-account', '--name', 'Acme', '--plan', 'free', '--owner-email', 'ops@acme.example', '--owner-name', 'Ops');
      expect(created.code).toBe(0);
      const account = JSON.parse(created.stdout);
      expect(account).toMatchObject({ plan: 'free', owner: { email: 'ops@acme.example', name: 'Ops', role: 'owner', status: 'active' } });
      expect(account.apiKey).toMatch(/^sk_[0-9A-Za-z]{32,}$/);

      const key = await admin(env, 'create-api-key', '--account', account.accountId, '--user', account.owner.id, '--name', 'ci');
      expect(key.code).toBe(0);
      const { id: keyId, apiKey } = JSON.parse(key.stdout);
      const usersWithKey = await fetch(`http://localhost:${env.PORT}/playbook/api/v1/users`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(usersWithKey.status).toBe(200);
      expect(usersWithKey.headers.get('x-ratelimit-limit')).toBe('100');

      const plan = await admin(env, 'set-plan', '--account', account.accountId, '--plan', 'enterprise');
      expect(JSON.parse(plan.stdout)).toEqual({ accountId: account.accountId, plan: 'enterprise' });
      const afterPlan = await fetch(`http://localhost:${env.PORT}/playbook/api/v1/users`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(afterPlan.headers.get('x-ratelimit-limit')).toBe('10000');

      const token = await admin(env, 'session-token', '--account', account.accountId, '--user', account.owner.id, '--ttl', '600');
      expect(token.code).toBe(0);
      expect(JSON.parse(token.stdout)).toEqual({ token: expect.any(String), expiresAt: expect.any(String) });

      const revoked = await admin(env, 'revoke-api-key', '--account', account.accountId, '--key', keyId);
      expect(JSON.parse(revoked.stdout)).toEqual({ id: keyId, revoked: true });
      const refused = await fetch(`http://localhost:${env.PORT}/playbook/api/v1/users`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(refused.status).toBe(401);

      const bad = await admin(env, 'create-account', '--name', 'X', '--plan', 'gold', '--owner-email', 'x@y.z');
      expect(bad.code).not.toBe(0);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toMatch(/--plan/);
      const unknown = await admin(env, 'session-token', '--account', account.accountId, '--user', 'usr_nope');
      expect(unknown.code).not.toBe(0);
    } finally {
      expect(await first.stop()).toBe(0);
    }

    // The same default data folder on new ports: the demo account and its key are still there.
    const again = { ...env, PORT: String(await freePort()), DYNAMODB_PORT: String(await freePort()) };
    const second = await npmStart(again);
    try {
      expect(/Demo account:\s+(\S+)/.exec(second.output())![1]).toBe(accountLine);
      expect((await runPrintedCurl(second.output())).status).toBe(200);
    } finally {
      await second.stop();
    }
  }, 420_000);

  it('`npm start` refuses an unknown FAULTS entry before starting anything, naming the entry', async () => {
    const env = { ...(await settings()), FAULTS: 'dynamodb:throttle:0.05,kinesis:error:0.1' };

    const run = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn('npm', ['start'], { env, cwd: clone, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      child.on('close', (code) => done({ code, output }));
    });

    expect(run.code).not.toBe(0);
    expect(run.output).toContain('Invalid FAULTS entry "kinesis:error:0.1": unknown service "kinesis" (one of dynamodb, events, sqs, s3)');
    expect(run.output).not.toContain('Press Ctrl-C');
  }, 60_000);
});
