import { randomBytes } from 'node:crypto';
import { freePort } from '../../local/ports.ts';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoDbLocal, type DynamoLocal } from '../../local/dynamodb-local.ts';
import { startLocalSqs, type LocalSqs } from '../../local/pipeline.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sessionSecret: string;
    sqsEndpoint: string;
  }
}

let dynamo: DynamoLocal | undefined;
let sqs: LocalSqs | undefined;

/** One in-memory DynamoDB Local and one fauxqs (with the topology's queues) for the whole run; tests isolate by account. */
export async function setup(project: TestProject) {
  dynamo = await startDynamoDbLocal(await freePort());
  await ensureTable(dynamo.endpoint, LOCAL_TABLE);
  sqs = await startLocalSqs(0);
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', sqs.endpoint);
  project.provide('sessionSecret', randomBytes(48).toString('base64url'));
}

export async function teardown() {
  await sqs?.stop();
  await dynamo?.stop();
}
