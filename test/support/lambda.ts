import { readFileSync } from 'node:fs';
import { fileSqsEndpoint } from './file-sqs.ts';
import { afterAll, inject } from 'vitest';
import { bundlesAt } from '../../local/lambda/build.ts';
import { readDeployment } from '../../local/lambda/deployment.ts';
import { startLocalLambda, type LocalLambda } from '../../local/lambda/index.ts';
import { LOCAL_REGION, LOCAL_TABLE, localOverlay } from '../../local/stack.ts';
import { parseFaults } from '#shared/faults/settings.ts';

let running: Promise<LocalLambda> | undefined;
let storeEndpoint: Promise<string> | undefined;
let archiveDir: string | undefined;

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
  // Handed to the functions by the local overlay (local/stack.ts FORWARDED); this file's worker is its own process.
  process.env.FAULTS = spec;
}

/**
 * The deployed functions for this test file, as `npm start` runs them: the
 * run's template and bundles (global setup), each function in its own worker
 * with its template's environment on the run's emulators, started on first
 * use and stopped after the file. The gateway and the pipeline of one file
 * share them, as they share the functions of one deployment.
 */
export function localLambda(): Promise<LocalLambda> {
  if (!running) {
    const { stackName, templateFile, bundleDir } = inject('deployment');
    running = (storeEndpoint ?? Promise.resolve(inject('dynamodbEndpoint'))).then((dynamodbEndpoint) =>
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
    afterAll(async () => {
      const lambda = await running;
      running = undefined;
      await lambda?.stop();
    });
  }
  return running;
}

/** The enrichment settings a function may be given (shared/organizations/settings.ts). */
const ENRICHMENT_KEYS = ['ENRICHMENT_PROVIDER', 'ENRICHMENT_URL', 'ENRICHMENT_API_KEY', 'ENRICHMENT_API_KEY_SECRET_ID', 'ENRICHMENT_TIMEOUT_MS', 'ENRICHMENT_FILE'] as const;

/**
 * The organizations function's enrichment provider, changed as a platform team
 * changes a deployed function's environment (UpdateFunctionConfiguration): the
 * next request cold-starts with exactly these settings.
 */
export async function setEnrichmentProvider(env: Partial<Record<(typeof ENRICHMENT_KEYS)[number], string>>): Promise<void> {
  const fn = (await localLambda()).byEntry('functions/organizations/handler.ts');
  await fn.updateEnvironment({ ...Object.fromEntries(ENRICHMENT_KEYS.map((k) => [k, undefined])), ...env });
}
