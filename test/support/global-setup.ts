import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../local/ports.ts';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoDbLocal, type DynamoLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_TABLE, prepareDeployment } from '../../local/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sessionSecret: string;
    /** The synthesized template of the local stage (JSON file) and the folder of its bundles: every file runs these. */
    deployment: { stackName: string; templateFile: string; bundleDir: string };
  }
}

let dynamo: DynamoLocal | undefined;
let scratch: string | undefined;

/**
 * Once per run: one in-memory DynamoDB Local and the deployment every test
 * file runs (the template of the local stage and its functions' bundles, as
 * `npm start` runs them); tests isolate by account there. Each worker starts its
 * own SQS/S3 emulator (setup-env.ts, file-sqs.ts).
 */
export async function setup(project: TestProject) {
  const prepared = prepareDeployment();
  dynamo = await startDynamoDbLocal(await freePort());
  await ensureTable(dynamo.endpoint, LOCAL_TABLE);
  const { deployment, bundles, template } = await prepared;
  scratch = mkdtempSync(join(tmpdir(), 'support-desk-tests-'));
  const templateFile = join(scratch, 'template.json');
  writeFileSync(templateFile, JSON.stringify(template));
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  project.provide('sessionSecret', randomBytes(48).toString('base64url'));
  project.provide('deployment', { stackName: deployment.stackName, templateFile, bundleDir: bundles.dir });
}

export async function teardown() {
  await dynamo?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}
