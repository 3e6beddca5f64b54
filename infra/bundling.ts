import { OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';

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
  // Bundle the pinned AWS SDK too, rather than whatever version the runtime ships.
  externalModules: [] as string[],
} satisfies BundlingOptions;

/** The bundle's file name inside its asset directory (NodejsFunction names an ESM bundle `index.mjs`). */
export const BUNDLE_FILE = 'index.mjs';

/**
 * The esbuild JS-API options equivalent to the command line NodejsFunction
 * builds from BUNDLING (aws-lambda-nodejs bundling.js, buildEsbuildArgs):
 * `--bundle entry --target --platform=node --format --outfile --minify
 * --sourcemap --sources-content=false --external:... --banner:js --main-fields`.
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
    banner: { js: BUNDLING.banner },
    mainFields: [...BUNDLING.mainFields],
    logLevel: 'warning' as const,
  };
}
