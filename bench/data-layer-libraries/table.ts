/** The bench's tables on DynamoDB Local (kept out of common.ts so the bundle entries do not carry table administration). */
import { CreateTableCommand, DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The single table's keys and the contact's three GSIs (shared/db/table-definition.ts, fewer indexes). */
export async function createTable(endpoint: string, TableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const attrs = ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk', 'gsi3pk', 'gsi3sk'];
  await client.send(
    new CreateTableCommand({
      TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attrs.map((AttributeName) => ({ AttributeName, AttributeType: 'S' })),
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: ['gsi1', 'gsi2', 'gsi3'].map((g) => ({
        IndexName: g,
        KeySchema: [
          { AttributeName: `${g}pk`, KeyType: 'HASH' },
          { AttributeName: `${g}sk`, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  client.destroy();
}

export async function deleteTable(endpoint: string, TableName: string): Promise<void> {
  const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await client.send(new DeleteTableCommand({ TableName }));
  client.destroy();
}
