import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The local HS256 secret, created once per data directory so tokens survive restarts. */
export function localSessionSecret(dataDir: string): string {
  const file = join(dataDir, 'local-secrets.json');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole under a name of its own, then linked into place unless another process got there first (admin
    // commands run side by side on a new data directory did): each process reads the one secret, never half a file.
    const draft = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`;
    writeFileSync(draft, JSON.stringify({ sessionSecret: randomBytes(48).toString('base64url') }, null, 2), { mode: 0o600 });
    try {
      linkSync(draft, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(draft, { force: true });
    }
  }
  return JSON.parse(readFileSync(file, 'utf8')).sessionSecret;
}
