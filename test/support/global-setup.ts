import { randomBytes } from 'node:crypto';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/ports.ts';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoDbLocal, type DynamoLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_TABLE, prepareDeployment } from '../../local/stack.ts';
import type { DeploymentOutcome, RunDeployment } from './deployment.ts';
import { BUNDLED_BY_SETUP } from './run-record.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where DynamoDB Local listens; it answers once the deployment file exists. */
    dynamodbEndpoint: string;
    sessionSecret: string;
    /** Written when the deployment and DynamoDB Local are ready (a DeploymentOutcome): read through test/support/deployment.ts. */
    deploymentFile: string;
  }
}

let dynamo: DynamoLocal | undefined;
let scratch: string | undefined;
let preparing: Promise<void> | undefined;

/**
 * Once per run: one in-memory DynamoDB Local and the deployment every test
 * file runs (the template of the local stage and its functions' bundles, as
 * `npm start` runs them); tests isolate by account there. Each worker starts its
 * own SQS/S3 emulator (setup-env.ts, file-sqs.ts).
 *
 * Vitest starts no file before every project's global setup has returned, and the unit and infra files need none
 * of this: so the setup returns at once with where things will be, and prepares them meanwhile (on a fresh clone
 * about 20 s: the template's synthesis, every function's bundle, the JVM). Each integration file's setup waits for
 * the file written at the end (test/support/deployment.ts); the unit and infra files run first (vitest.config.ts).
 */
export async function setup(project: TestProject) {
  scratch = mkdtempSync(join(tmpdir(), 'support-desk-tests-'));
  const dir = scratch;
  const port = await freePort();
  const deploymentFile = join(dir, 'deployment.json');
  const outcome = (value: DeploymentOutcome) => {
    // Whole or not at all: a worker polling for the file never reads half of it.
    writeFileSync(`${deploymentFile}.tmp`, JSON.stringify(value));
    renameSync(`${deploymentFile}.tmp`, deploymentFile);
  };
  preparing = (async (): Promise<RunDeployment> => {
    const prepared = prepareDeployment();
    // Awaited below; until then a failure must not count as unhandled.
    prepared.catch(() => {});
    dynamo = await startDynamoDbLocal(port);
    await ensureTable(dynamo.endpoint, LOCAL_TABLE);
    const { deployment, bundles, template } = await prepared;
    // For the run's record (the bench's suite row): whether this run paid for the cold builds a fresh clone's does.
    (globalThis as Record<symbol, number | undefined>)[BUNDLED_BY_SETUP] = bundles.built;
    const templateFile = join(dir, 'template.json');
    writeFileSync(templateFile, JSON.stringify(template));
    return { stackName: deployment.stackName, templateFile, bundleDir: bundles.dir };
  })().then(
    (deployment) => outcome({ deployment }),
    (error: unknown) => outcome({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
  );
  project.provide('dynamodbEndpoint', `http://127.0.0.1:${port}`);
  project.provide('sessionSecret', randomBytes(48).toString('base64url'));
  project.provide('deploymentFile', deploymentFile);
}

export async function teardown() {
  await preparing;
  await dynamo?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
