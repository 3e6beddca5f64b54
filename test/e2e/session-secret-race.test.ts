import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/wait.ts';

/**
 * `npm start` and the admin CLI each make the data directory's session secret if there is none. Run side by side on
 * a new data directory (a test's four admin commands did), they read half a file ("Unexpected end of JSON input"),
 * or each kept a secret of its own: a session token one made, the other refused. Eight processes at once, six times.
 */
const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'secret-race-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the local session secret', () => {
  it('is one secret for every process that asks for it first at the same moment', async () => {
    for (let round = 0; round < 6; round++) {
      const dir = join(work, `data-${round}`);
      const go = join(work, `go-${round}`);
      const runs = Array.from(
        { length: 8 },
        () =>
          new Promise<{ code: number | null; out: string; err: string }>((done) => {
            const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/session-secret-child.ts', dir, go], { cwd: root });
            let out = '';
            let err = '';
            child.stdout.on('data', (d) => (out += d));
            child.stderr.on('data', (d) => (err += d));
            child.on('close', (code) => done({ code, out, err }));
          }),
      );
      // All eight loaded and waiting, then let them go together.
      await eventually(() => readdirSync(work).filter((f) => f.startsWith(`go-${round}.`)).length === 8, 30_000, 'eight processes ready');
      writeFileSync(go, '');
      const answers = await Promise.all(runs);
      expect(answers.map((a) => [a.code, a.err])).toEqual(Array.from({ length: 8 }, () => [0, '']));
      expect(new Set(answers.map((a) => a.out)).size, `round ${round}`).toBe(1);
      expect(answers[0].out).toMatch(/^[\w-]{64}$/);
    }
  }, 120_000);
});
