import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { join } from 'node:path';

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
 * How every function is bundled, in one place: the CDK app hands these
 * options to NodejsFunction (which runs esbuild), and the local stack
 * (local/lambda/build.ts) runs esbuild with the very same options through
 * `esbuildOptions`, so the file a worker imports locally is byte for byte the
 * `index.mjs` that `cdk deploy` uploads (test/infra/bundles.test.ts compares them).
 */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  // Stack traces map to our files and lines; the sources themselves stay out of the zip.
  sourceMap: true,
  sourcesContent: false,
  mainFields: ['module', 'main'],
  // Some dependencies still call require(); give the ESM bundle one.
  banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
  // The pinned AWS SDK is bundled (minified and tree-shaken it imports faster than the runtime's copy, and
  // its version is ours), except the credential sources a Lambda function never loads.
  externalModules: SDK_CREDENTIAL_SOURCES_NEVER_LOADED_IN_LAMBDA,
  // esbuild resolves these relative to its working directory, the project root (NodejsFunction's projectRoot).
  esbuildArgs: { '--alias': Object.entries(ALIASES).map(([from, to]) => `${from}=./${to}`) },
} satisfies BundlingOptions;

/** The bundle's file name inside its asset directory (NodejsFunction names an ESM bundle `index.mjs`). */
export const BUNDLE_FILE = 'index.mjs';

/**
 * The esbuild JS-API options equivalent to the command line NodejsFunction
 * builds from BUNDLING (aws-lambda-nodejs bundling.js, buildEsbuildArgs):
 * `--bundle entry --target --platform=node --format --outfile --minify
 * --sourcemap --sources-content=false --external:... --banner:js --main-fields`
 * followed by BUNDLING.esbuildArgs (`--alias:...`).
 */
export function esbuildOptions(entry: string, outdir: string) {
  return {
    entryPoints: [entry],
    bundle: true,
    target: BUNDLING.target,
    platform: 'node' as const,
    format: 'esm' as const,
    outfile: `${outdir}/${BUNDLE_FILE}`,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    external: [...BUNDLING.externalModules],
    alias: Object.fromEntries(Object.entries(ALIASES).map(([from, to]) => [from, join(import.meta.dirname, '..', to)])),
    banner: { js: BUNDLING.banner },
    mainFields: [...BUNDLING.mainFields],
    logLevel: 'warning' as const,
  };
}
