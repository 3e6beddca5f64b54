/**
 * The floor of issue 42's cold-start goal: a handler doing one `GetItem` with
 * the DocumentClient, the client made once at top level as our functions make
 * theirs, and nothing else (no logger, no metrics, no schemas). bench/bundles.ts
 * bundles it as every function is bundled (infra/bundling.ts bundleFunction:
 * ESM, minified, code splitting, the same source maps) and imports it beside
 * every function in a fresh Node process with the same environment. It is not
 * part of the template: nothing deploys it.
 *
 * Its event is the key to read; it answers what a GET would.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';

const ddb = DynamoDBDocumentClient.from(new DynamoDBClient({}));
const TableName = process.env.TABLE_NAME;

export async function handler(event: { key: { pk: string; sk: string } }): Promise<{ statusCode: number; body: string }> {
  const { Item } = await ddb.send(new GetCommand({ TableName, Key: event.key }));
  return Item ? { statusCode: 200, body: JSON.stringify(Item) } : { statusCode: 404, body: '{}' };
}
