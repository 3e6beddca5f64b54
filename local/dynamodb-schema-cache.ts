/**
 * The schema cache for DynamoDB Local (issue 42: the store is the local stack's bottleneck).
 *
 * DynamoDB Local keeps each table's description as JSON in SQLite and parses it again for every request, every item
 * it reads and every item it writes: some 10 KB for our nine indexes. Stop 50's profile of the store found that parse
 * in 47% of its CPU. A Java agent (dynamodb-schema-cache/*.java) keeps what it parsed, keyed by the exact bytes it
 * parsed, and empties itself whenever a table is created, changed or deleted. What the store answers is unchanged;
 * docs/performance.md has what it saves.
 *
 * The same agent also sets how the store's one SQLite connection journals its writes (dynamodb-schema-cache/
 * StoreConnection.java): WAL, synced at checkpoints rather than at each commit, temporary files in memory
 * (docs/decisions.md, "A schema cache in the local store").
 *
 * The agent is compiled here with the JDK's `javac` and `jar`, once per source, JDK and DynamoDB Local version, under
 * node_modules/.cache. It uses the JDK's own copy of ASM, so it needs a JDK of the same version as `java`. Without one
 * (a JRE alone, another DynamoDB Local, or `DYNAMODB_SCHEMA_CACHE=off`), the store runs as AWS ships it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The DynamoDB Local the agent was written against: its call sites are checked by name and count at load. */
export const SCHEMA_CACHE_FOR = 'dynamodb_local_2026-05-28';
const SOURCES = join(import.meta.dirname, 'dynamodb-schema-cache');
const CACHE = join(import.meta.dirname, '..', 'node_modules', '.cache', 'support-desk', 'dynamodb-schema-cache');
const ASM = '--add-exports=java.base/jdk.internal.org.objectweb.asm=ALL-UNNAMED';

const versions = new Map<string, string | undefined>();
/** The major version a JDK tool reports (`java -version` on stderr, `javac -version` on stdout), or undefined without it; asked once. */
function majorVersion(tool: string): string | undefined {
  if (!versions.has(tool)) {
    const run = spawnSync(tool, ['-version'], { encoding: 'utf8' });
    versions.set(tool, run.error || run.status !== 0 ? undefined : /(?:version "|javac )(\d+)/.exec(`${run.stdout}${run.stderr}`)?.[1]);
  }
  return versions.get(tool);
}

/** Why the agent cannot be used here (what the test of it skips on), or undefined when it can. */
export function schemaCacheUnavailable(jarDir: string): string | undefined {
  if (process.env.DYNAMODB_SCHEMA_CACHE === 'off') return 'DYNAMODB_SCHEMA_CACHE=off';
  if (basename(jarDir) !== SCHEMA_CACHE_FOR) return `written for ${SCHEMA_CACHE_FOR}, not ${basename(jarDir)}`;
  const java = majorVersion('java');
  const javac = majorVersion('javac');
  if (!java || javac !== java) return `needs a JDK of the version of java (${java ?? 'none'}); javac: ${javac ?? 'none'}`;
  return undefined;
}

/**
 * The JVM arguments that load the agent for DynamoDB Local in `jarDir`, or none when it cannot be used. Its jar is
 * built into a folder of its own and renamed into place, so starts that race (the test workers) never read half a jar.
 */
export function schemaCacheArgs(jarDir: string): string[] {
  if (schemaCacheUnavailable(jarDir)) return [];
  const files = readdirSync(SOURCES)
    .filter((f) => f.endsWith('.java'))
    .sort();
  const hash = createHash('sha256').update(`${majorVersion('java')}\0${SCHEMA_CACHE_FOR}\0`);
  for (const f of files) hash.update(`${f}\0${readFileSync(join(SOURCES, f), 'utf8')}\0`);
  const dir = join(CACHE, hash.digest('hex').slice(0, 16));
  const jar = join(dir, 'agent.jar');
  if (!existsSync(jar) && !build(jarDir, files, dir)) return [];
  return [ASM, `-javaagent:${jar}`];
}

function build(jarDir: string, files: string[], dir: string): boolean {
  mkdirSync(CACHE, { recursive: true });
  const work = mkdtempSync(join(CACHE, 'build-'));
  try {
    const classes = join(work, 'classes');
    const javac = spawnSync('javac', [ASM, '-d', classes, '-cp', join(jarDir, 'DynamoDBLocal_lib', '*'), ...files.map((f) => join(SOURCES, f))], { encoding: 'utf8' });
    if (javac.status !== 0) return false;
    writeFileSync(join(work, 'manifest.txt'), 'Premain-Class: supportdesk.local.SchemaCacheAgent\n');
    const jar = spawnSync('jar', ['cfm', join(work, 'agent.jar'), join(work, 'manifest.txt'), '-C', classes, '.'], { encoding: 'utf8' });
    if (jar.status !== 0) return false;
    rmSync(classes, { recursive: true, force: true });
    rmSync(join(work, 'manifest.txt'));
    try {
      renameSync(work, dir);
    } catch {
      // Another start built it first: theirs is the same jar.
    }
    return existsSync(join(dir, 'agent.jar'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
