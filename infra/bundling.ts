import { buildSync, version as esbuildVersion, type BuildResult } from 'esbuild';
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { BundleStore, bundleCacheEnabled } from './bundle-cache.ts';
import { trimSourceMap } from './source-map-trim.ts';

/**
 * The AWS SDK's default credential chain tries the environment first and
 * imports every other source (SSO, shared ini files and the STS/SSO clients
 * they need, credential_process, web identity, container and instance
 * metadata) only when the ones before it found nothing. Lambda always puts
 * the role's credentials in the environment, so a function never reaches
 * them: left out of the bundle (about 120 KB of every bundle that talks to
 * AWS), they resolve from the runtime's SDK if a function ever does, and from
 * node_modules where the local stack runs bundles inside the project. The SDK
 * that does run (clients, signing, retries, serialisation) stays bundled at
 * the version package.json pins (docs/performance.md, "Cold start").
 */
export const SDK_CREDENTIAL_SOURCES_NEVER_LOADED_IN_LAMBDA = [
  '@aws-sdk/credential-provider-ini',
  '@aws-sdk/credential-provider-sso',
  '@aws-sdk/credential-provider-process',
  '@aws-sdk/credential-provider-web-identity',
  '@aws-sdk/credential-provider-http',
  '@smithy/credential-provider-imds',
];

/**
 * `node:http` as a CommonJS value rather than an ES namespace, whose creation
 * loads undici (see the file). Powertools' tracer and the SDK's instance
 * metadata provider imported it statically (35 ms of every cold start); no
 * bundle does today, and this keeps a dependency that does from bringing the
 * cost back. It also serves the SDK's lazy import for http endpoints (local
 * DynamoDB).
 */
const NODE_HTTP_SHIM = 'infra/node-http.cjs';
const ALIASES = { 'node:http': NODE_HTTP_SHIM, http: NODE_HTTP_SHIM };

/**
 * How every function is bundled, in one place: the CDK app stages each
 * function's asset with `functionCode` (esbuild, run here), and the local stack
 * (local/lambda/build.ts) runs `bundleFunction` with the very same options, so
 * the files a worker imports locally are byte for byte the asset `cdk deploy`
 * uploads (test/infra/bundles.test.ts compares them).
 *
 * Code splitting (ESM, `splitting`): a dynamic `import()` becomes a file of its
 * own under `chunks/`, loaded when a call first needs it, so code only some
 * calls run (sanitize-html and postcss, S3 presigning, re2js, the SES client,
 * the SDK's event streams) no longer costs every cold start its parse and
 * compile. NodejsFunction's own bundling writes one file (`--outfile`), which
 * inlines every dynamic import; that is why the asset is bundled here
 * (docs/performance.md, "Cold start").
 */
export const BUNDLING = {
  target: 'node24',
  minify: true,
  // Stack traces map to our files and lines; the sources themselves stay out of the zip.
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // Some dependencies still call require(); give the ESM bundle one (every chunk gets its own, module-scoped).
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // The pinned AWS SDK is bundled (minified and tree-shaken it imports faster than the runtime's copy, and
  // its version is ours), except the credential sources a Lambda function never loads.
  externalModules: SDK_CREDENTIAL_SOURCES_NEVER_LOADED_IN_LAMBDA,
} as const;

/** The bundle's entry file inside its asset directory (Lambda's handler is `index.handler`). */
export const BUNDLE_FILE = 'index.mjs';
/** Where the chunks that load on first use go, inside the asset directory. */
export const CHUNK_DIR = 'chunks';

/**
 * Size budgets, in KB, of what a cold start loads: the entry file and every
 * chunk it imports statically (issue 30). Chunks behind a dynamic import load
 * on first use and are not counted.
 */
export const BUNDLE_BUDGET_KB = 300;
export const BUNDLE_BUDGET_KB_BY_ENTRY: Record<string, number> = {
  'functions/messages/handler.ts': 400,
  'functions/email-inbound/handler.ts': 400,
};

/**
 * What a function still over its goal may load at a cold start, until the goal
 * is met: its size when the functions moved to zod/mini and stopped loading
 * other modules' request schemas and the table's every entity declaration
 * (stop 56), plus 10–15 KB, so a growth shows in test/infra/bundles.test.ts
 * (five functions met the goal then and have no ceiling). What stands in the way (the
 * DynamoDB client, zod and Powertools, ~270 KB that every call needs) is in
 * docs/performance.md, "Cold start (issue 30)" and "Stop 56".
 */
export const BUNDLE_CEILING_KB_BY_ENTRY: Record<string, number> = {
  // The tickets, contacts and messages services a mail goes through, postal-mime, the SDK, zod (sanitize-html
  // and the S3 client already load on first use); docs/performance.md.
  'functions/email-inbound/handler.ts': 480,
  'functions/attachment-cleanup/handler.ts': 475,
  'functions/automations/consumer.ts': 360,
  'functions/automations/handler.ts': 360,
  'functions/automations/time-rules-consumer.ts': 355,
  // It also runs merges (decisions §20): the shared chunks the merge flow's own chunk splits off (messages,
  // attachments and the S3 client load on the first merge only); privacy's executors (decisions §23) load from chunks of their own.
  'functions/bulk-jobs/handler.ts': 400,
  'functions/contacts/handler.ts': 330,
  'functions/email-sender/handler.ts': 375,
  'functions/enrichment/handler.ts': 320,
  'functions/group-distribution/handler.ts': 345,
  'functions/groups/handler.ts': 370,
  'functions/history/handler.ts': 365,
  // The erasure and data-export requests, retention, and a data export's presigned download (the S3 presigner in a
  // chunk of its own, which moves the SDK code it shares into chunks loaded at init).
  'functions/jobs/handler.ts': 400,
  'functions/messages/handler.ts': 435,
  'functions/organizations/handler.ts': 335,
  'functions/reindex/handler.ts': 325,
  'functions/retention-sweep/handler.ts': 335,
  // The satisfaction group (decisions §24) reads and rates tickets through the tickets service; the survey page loads no other group's code.
  'functions/satisfaction/handler.ts': 355,
  'functions/sla-breach-check/handler.ts': 325,
  'functions/sla-policies/handler.ts': 365,
  'functions/sla-recompute/handler.ts': 335,
  'functions/sla-state/handler.ts': 350,
  // Issue 42: a field change flushes the authorizer cache (shared/auth/authorizer-cache.ts), +19.9 KB at
  // init; the same when that module is imported lazily, so the growth is in the chunks its API Gateway client shares.
  'functions/ticket-fields/handler.ts': 360,
  'functions/tickets/handler.ts': 380,
  'functions/users/handler.ts': 370,
  // Views and macros (issue 39): the macros' message path (messages, attachments' S3 presigner) is most of it.
  'functions/views/handler.ts': 455,
  'functions/view-counts/handler.ts': 340,
  'functions/view-counts/recount.ts': 335,
  'functions/view-counts/pass.ts': 315,
  'functions/webhook-delivery/handler.ts': 315,
  'functions/webhooks/handler.ts': 345,
};

// This module loads no CDK: the local stack builds its bundles with it, and a warm `npm start` loads no CDK at all.
export const PROJECT_ROOT = join(import.meta.dirname, '..');

/**
 * Where esbuild is told it writes, for every bundle: the files are kept in
 * memory and written to the real folder afterwards (writeBundle). Chunk names
 * carry a hash of their content, source maps included, and a map's paths to
 * the sources are relative to the folder written to; one folder for all keeps
 * CDK's asset and the local build byte for byte equal, wherever each goes.
 */
const NOMINAL_OUTDIR = join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'bundle');
/** Where a map's sources that are not ours are (its paths are relative to NOMINAL_OUTDIR, itself under node_modules). */
const DEPENDENCIES = join(PROJECT_ROOT, 'node_modules') + sep;
/**
 * A map's source as its path in the project (`shared/http/error-map.ts`), resolved against the bundle's folder
 * wherever it is: a stack trace names the file in the repository, in Lambda (/var/task/shared/...) as locally.
 * A map's sources are relative to the map's own folder: the asset's root for index.mjs, `chunks/` for a chunk's.
 */
const projectPath = (mapDir: string) => (source: string) => relative(PROJECT_ROOT, resolve(mapDir, source));

/** The esbuild options of one function's bundle (index.mjs, chunks/, source maps), in memory: see writeBundle. */
export function esbuildOptions(entry: string) {
  const outdir = NOMINAL_OUTDIR;
  return {
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { index: entry },
    bundle: true,
    splitting: true,
    target: BUNDLING.target,
    platform: 'node' as const,
    format: 'esm' as const,
    outdir,
    entryNames: '[name]',
    chunkNames: `${CHUNK_DIR}/[name]-[hash]`,
    outExtension: { '.js': '.mjs' },
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    external: [...BUNDLING.externalModules],
    alias: Object.fromEntries(Object.entries(ALIASES).map(([from, to]) => [from, join(PROJECT_ROOT, to)])),
    banner: { js: BUNDLING.banner },
    mainFields: [...BUNDLING.mainFields],
    logLevel: 'warning' as const,
    metafile: true as const,
    write: false as const,
  };
}

/**
 * Write a bundle esbuild built in memory (esbuildOptions) to `outdir`, each source map cut to our own sources
 * (source-map-trim.ts). Most chunks are the same in many functions' bundles (their names carry a hash of their
 * content): a build of many functions passes one `trimmed` memo, so each distinct map is cut once (104 cuts instead
 * of 329 for the 37 functions).
 */
export function writeBundle(result: BuildResult<{ write: false; metafile: true }>, outdir: string, trimmed = new Map<string, string>()): void {
  for (const file of result.outputFiles) {
    const to = join(outdir, relative(NOMINAL_OUTDIR, file.path));
    mkdirSync(dirname(to), { recursive: true });
    if (!file.path.endsWith('.map')) {
      writeFileSync(to, file.contents);
      continue;
    }
    const key = `${file.path}\0${createHash('sha1').update(file.contents).digest('hex')}`;
    let map = trimmed.get(key);
    if (map === undefined) {
      const mapDir = dirname(file.path);
      map = trimSourceMap(file.text, (source) => !resolve(mapDir, source).startsWith(DEPENDENCIES), projectPath(mapDir));
      trimmed.set(key, map);
    }
    writeFileSync(to, map);
  }
}

/** The folder of an entry's bundle, in a build of several (local/lambda/build.ts) and in the bundle store. */
export const bundleFolder = (entry: string) => entry.replace(/\.ts$/, '').replace(/[/\\]/g, '__');

/** Bundles kept between builds, for `cdk synth` and the local stack alike (bundle-cache.ts). */
export const BUNDLE_STORE = new BundleStore(join(PROJECT_ROOT, 'node_modules', '.cache', 'support-desk', 'bundles', 'entries'), PROJECT_ROOT);

/** What, besides the files it reads, makes an entry's bundle: its esbuild options, esbuild's version and the bundler's own code. */
export function bundleOptionsKey(entry: string): string {
  const own = ['infra/bundling.ts', 'infra/source-map-trim.ts', 'infra/bundle-cache.ts'].map((f) =>
    createHash('sha1')
      .update(readFileSync(join(PROJECT_ROOT, f)))
      .digest('hex'),
  );
  return JSON.stringify([esbuildOptions(entry), esbuildVersion, own]);
}

/** A memo of cut source maps for bundleFunction's builds: `cdk synth` bundles every function in one short-lived process. */
const synthTrimmed = new Map<string, string>();

/**
 * Bundle one function into `outdir` (synchronously: CDK's local bundling is synchronous): its kept bundle when
 * nothing it was built from has changed (bundle-cache.ts), else a new build, then kept.
 */
export function bundleFunction(entry: string, outdir: string): void {
  const options = bundleOptionsKey(entry);
  const kept = BUNDLE_STORE.find(bundleFolder(entry), options);
  if (kept) {
    cpSync(kept, outdir, { recursive: true });
    return;
  }
  const result = buildSync(esbuildOptions(entry));
  writeBundle(result, outdir, synthTrimmed);
  if (bundleCacheEnabled()) BUNDLE_STORE.keep(bundleFolder(entry), options, Object.keys(result.metafile.inputs), (dir) => cpSync(outdir, dir, { recursive: true }));
}

/** Relative specifiers a module imports statically (`import ... from "./x"`, `import "./x"`), not its dynamic `import()`s. */
const STATIC_IMPORT = /\bimport\s*(?:[\w$]+\s*,?\s*)?(?:\{[^}]*\}|\*\s*as\s+[\w$]+)?\s*(?:from\s*)?["'](\.{1,2}\/[^"']+)["']/g;

/**
 * The files a cold start of a bundle loads: its entry file and every chunk
 * reachable from it by static imports, with their sizes in bytes.
 */
export function initFiles(entryFile: string): Map<string, number> {
  const seen = new Map<string, number>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    const text = readFileSync(file, 'utf8');
    seen.set(file, Buffer.byteLength(text));
    for (const m of text.matchAll(STATIC_IMPORT)) visit(join(dirname(file), m[1]));
  };
  visit(entryFile);
  return seen;
}

/** Bytes a cold start of a bundle loads (see initFiles). */
export const initBytes = (entryFile: string) => [...initFiles(entryFile).values()].reduce((a, b) => a + b, 0);
