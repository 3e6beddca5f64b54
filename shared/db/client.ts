import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { env } from '../config/env.ts';
import { instrument } from './stats.ts';

const { AWS_REGION, DYNAMODB_ENDPOINT } = env();

/** The one DynamoDB client of a process, created at module load. */
export const ddb = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    region: AWS_REGION,
    ...(DYNAMODB_ENDPOINT ? { endpoint: DYNAMODB_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  }),
  { marshallOptions: { removeUndefinedValues: true } },
);

export const tableName = (): string => env().TABLE_NAME;

if (process.env.DDB_STATS === '1') instrument(ddb);
