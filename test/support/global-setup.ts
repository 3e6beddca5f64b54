import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import type { TestProject } from 'vitest/node';
import { ensureTable, startDynamoDbLocal, type DynamoLocal } from '../../local/dynamodb-local.ts';
import { LOCAL_TABLE } from '../../local/stack.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    sessionSecret: string;
  }
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

let dynamo: DynamoLocal | undefined;

/** One in-memory DynamoDB Local for the whole run; tests isolate by account. */
export async function setup(project: TestProject) {
  dynamo = await startDynamoDbLocal(await freePort());
  await ensureTable(dynamo.endpoint, LOCAL_TABLE);
  project.provide('dynamodbEndpoint', dynamo.endpoint);
  project.provide('sessionSecret', randomBytes(48).toString('base64url'));
}

export async function teardown() {
  await dynamo?.stop();
}
