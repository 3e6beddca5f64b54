import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';

/** What a function builds at a cold start, before its first request. */
export interface SchemasAtInit {
  /** zod schemas constructed by importing the bundle (checks and wrappers included: each is an instance). */
  schemas: number;
  /** The ids among them in zod's global registry (`.meta({ id })`: the API's and the events' named schemas). */
  ids: string[];
}

const MARK = '@@schemas ';

/**
 * The child's script. zod reads its global config and registry from `globalThis` (one for every copy of zod in the
 * process, so every bundle's), and calls the config's `postProcessor` with each schema it constructs: set before the
 * import, it counts them. Counts, not timings: the same bundle gives the same figure on any machine.
 */
const SCRIPT = `let schemas = 0;
globalThis.__zod_globalConfig = { postProcessor() { schemas++; } };
await import(process.argv[1]);
const ids = [...(globalThis.__zod_globalRegistry?._idmap?.keys() ?? [])].sort();
process.stdout.write('${MARK}' + JSON.stringify({ schemas, ids }) + '\\n');
process.exit(0);`;

/** Import a function's bundle in a fresh Node process with `env` (its template's) and report what it built. */
export function schemasAtInit(file: string, env: Record<string, string>): Promise<SchemasAtInit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', SCRIPT, pathToFileURL(file).href], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = out.split('\n').find((l) => l.startsWith(MARK));
      if (code === 0 && line) resolve(JSON.parse(line.slice(MARK.length)) as SchemasAtInit);
      else reject(new Error(`${file}: exited ${code}: ${err.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}
