import { readFileSync } from 'node:fs';
import { fileSqsEndpoint } from './file-sqs.ts';
import { runDeployment } from './deployment.ts';
import { inject } from 'vitest';
import { bundlesAt } from '../../local/lambda/build.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import { startLocalLambda, type LocalLambda } from '../../local/lambda/index.ts';
import { LOCAL_REGION, LOCAL_TABLE, localOverlay } from '../../local/stack.ts';
import { parseFaults } from '#shared/faults/settings.ts';

/** This file's functions, and whether they are its own (stopped after it) or the worker's (kept). */
let running: Promise<LocalLambda> | undefined;
let own = false;
let storeEndpoint: Promise<string> | undefined;
let archiveDir: string | undefined;
/** What this file changed in the worker's functions, put back after it. */
const restores: (() => Promise<void>)[] = [];

/**
 * The functions this worker keeps from one file to the next (the integration project does not isolate files), so
 * that a file does not start cold what the previous one warmed: a deployed stack's functions stay warm between
 * callers too. Only a file that runs them as they are shares them; a file that changes how they run (another store
 * endpoint, an archive, FAULTS or another knob of the overlay) gets its own, stopped after it.
 */
let shared: Promise<LocalLambda> | undefined;
let baseline: string | undefined;

/** Everything the process's environment changes in the functions' (local/stack.ts localOverlay), as one string. */
const overlayKey = () => JSON.stringify(localOverlay(undefined)({} as never, { EMAIL_TRANSPORT: 'ses', PUBLIC_BASE_URL: '-', ENRICHMENT_PROVIDER: '-' }));

/** Called by setup-env.ts before each file, its environment set: what a file that changes nothing runs with. */
export function beginFile(): void {
  baseline = overlayKey();
}

/**
 * Called by setup-env.ts after each file, once the file's own after-hooks have run (its gateway and pipeline are
 * closed), and again before the next file (a file that failed to load ran no hook): its own functions stop, and
 * what it changed in the worker's is put back.
 */
export async function endFile(): Promise<void> {
  const [lambda, wasOwn, changed] = [running, own, restores.splice(0)];
  running = storeEndpoint = archiveDir = undefined;
  own = false;
  if (wasOwn) await (await lambda?.catch(() => undefined))?.stop();
  for (const restore of changed) await restore();
}

/**
 * Give this file's functions another DynamoDB endpoint than the run's (a proxy
 * in front of it: test/support/store-proxy.ts). Call it before anything starts
 * them (useGateway, usePipeline).
 */
export function routeStoreThrough(endpoint: Promise<string>): void {
  if (running) throw new Error('routeStoreThrough must come before the functions start (before useGateway / usePipeline)');
  storeEndpoint = endpoint;
}

/**
 * Let this file's bus keep the template's archive in `dir` (as `npm start`
 * keeps it under DATA_DIR/archive). Call it before anything starts the functions.
 */
export function archiveBusTo(dir: string): void {
  if (running) throw new Error('archiveBusTo must come before the functions start (before useGateway / usePipeline)');
  archiveDir = dir;
}

/**
 * Make this file's functions inject `spec` (FAULTS, decisions §19) into their
 * AWS SDK calls, as `FAULTS=... npm start` does; the file's own fixtures stay
 * honest. Call it before anything starts them (useGateway, usePipeline).
 */
export function withFaults(spec: string): void {
  if (running) throw new Error('withFaults must come before the functions start (before useGateway / usePipeline)');
  parseFaults(spec);
  // Handed to the functions by the local overlay (local/stack.ts FORWARDED); put back after the file (setup-env.ts).
  process.env.FAULTS = spec;
}

/**
 * The deployed functions for this test file, as `npm start` runs them: the
 * run's template and bundles (global setup), each function in its own worker
 * with its template's environment on the run's emulators, started on first
 * use. The gateway and the pipeline of one file share them, as they share the
 * functions of one deployment; the worker's next file shares them too, unless
 * either changes how they run.
 */
export function localLambda(): Promise<LocalLambda> {
  if (running) return running;
  const start = () => {
    const { stackName, templateFile, bundleDir } = runDeployment();
    return (storeEndpoint ?? Promise.resolve(inject('dynamodbEndpoint'))).then((dynamodbEndpoint) =>
      startLocalLambda({
        deployment: readDeployment(stackName, JSON.parse(readFileSync(templateFile, 'utf8'))),
        bundles: bundlesAt(bundleDir),
        region: LOCAL_REGION,
        tableName: LOCAL_TABLE,
        dynamodbEndpoint,
        sqsEndpoint: fileSqsEndpoint(),
        sessionSecret: { current: inject('sessionSecret') },
        overlay: localOverlay(undefined),
        archiveDir,
      }),
    );
  };
  own = storeEndpoint !== undefined || archiveDir !== undefined || overlayKey() !== baseline;
  if (own) return (running = start());
  if (!shared) {
    const lambda = (shared = start());
    // A stack that failed to start is not kept for the next file.
    lambda.catch(() => shared === lambda && (shared = undefined));
  }
  return (running = shared);
}

/** The enrichment settings a function may be given (shared/organizations/settings.ts). */
const ENRICHMENT_KEYS = ['ENRICHMENT_PROVIDER', 'ENRICHMENT_URL', 'ENRICHMENT_API_KEY', 'ENRICHMENT_API_KEY_SECRET_ID', 'ENRICHMENT_TIMEOUT_MS', 'ENRICHMENT_FILE'] as const;

/**
 * The organizations function's enrichment provider, changed as a platform team
 * changes a deployed function's environment (UpdateFunctionConfiguration): the
 * next request cold-starts with exactly these settings.
 */
export async function setEnrichmentProvider(env: Partial<Record<(typeof ENRICHMENT_KEYS)[number], string>>): Promise<void> {
  const lambda = await localLambda();
  const fn = lambda.byEntry('functions/organizations/handler.ts');
  // The worker's next file runs the function with its template's settings again.
  if (!own) {
    const template = lambda.environment(fn.def.logicalId);
    restores.push(() => fn.updateEnvironment(Object.fromEntries(ENRICHMENT_KEYS.map((k) => [k, template[k]]))));
  }
  await fn.updateEnvironment({ ...Object.fromEntries(ENRICHMENT_KEYS.map((k) => [k, undefined])), ...env });
}
