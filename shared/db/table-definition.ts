/**
 * The single table's shape, shared by the CDK app and the local stack so the
 * two can never drift: key attributes, GSIs, stream and TTL.
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

/** Generic, overloaded GSIs projecting every attribute; each access pattern documents which one it uses (docs/data-model.md). */
export const GSI_NAMES = ['gsi1', 'gsi2', 'gsi3', 'gsi4'] as const;
/**
 * Overloaded GSIs projecting only the keys: views whose page is fetched by key
 * afterwards (one BatchGetItem), so a write moves an entry only when its keys
 * change and the index stores no second copy of the items (the ticket views of
 * decisions §13).
 */
export const KEYS_ONLY_GSI_NAMES = ['gsi5', 'gsi6', 'gsi7', 'gsi8'] as const;
export type GsiName = (typeof GSI_NAMES)[number] | (typeof KEYS_ONLY_GSI_NAMES)[number];
/** Every overloaded GSI with its projection, in the order they were added to the table. */
export const ALL_GSIS: readonly { name: GsiName; projection: 'ALL' | 'KEYS_ONLY' }[] = [
  ...GSI_NAMES.map((name) => ({ name, projection: 'ALL' as const })),
  ...KEYS_ONLY_GSI_NAMES.map((name) => ({ name, projection: 'KEYS_ONLY' as const })),
];

export const gsiKeys = (name: GsiName) => ({ partitionKey: `${name}pk`, sortKey: `${name}sk` }) as const;

/**
 * The outbox's own index: pending items (write-sharded partitions) and parked
 * ones. It projects only the keys: the sweeper reads the sort key (creation
 * time) and the table keys, then fetches the few items it publishes, so the
 * index does not store a second copy of every event.
 */
export const OUTBOX_INDEX = { name: 'outbox', partitionKey: 'obpk', sortKey: 'obsk' } as const;
/** Pending outbox partitions (the outbox entity's `queue` index, PENDING#<shard>). */
export const OUTBOX_SHARDS = 8;

/** The indexes an entity's access pattern can read: the overloaded GSIs and the outbox's own. */
export type IndexName = GsiName | typeof OUTBOX_INDEX.name;

/** Key attribute names of an index. */
export const indexKeys = (name: IndexName) => (name === OUTBOX_INDEX.name ? { partitionKey: OUTBOX_INDEX.partitionKey, sortKey: OUTBOX_INDEX.sortKey } : gsiKeys(name));

/** Items with this numeric attribute (epoch seconds) expire: rate-limit windows, idempotency records. */
export const TTL_ATTRIBUTE = 'expiresAt';

/** The stream carries new images: the outbox publisher reads event items from it. */
export const STREAM_VIEW = 'NEW_IMAGE' as const;

/** CreateTable input for DynamoDB Local (the CDK app builds the same table from the constants above). */
export function localCreateTableInput(tableName: string) {
  const attributes = new Set<string>([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey]);
  for (const g of ALL_GSIS) {
    attributes.add(gsiKeys(g.name).partitionKey);
    attributes.add(gsiKeys(g.name).sortKey);
  }
  attributes.add(OUTBOX_INDEX.partitionKey);
  attributes.add(OUTBOX_INDEX.sortKey);
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: [...ALL_GSIS.map((g) => localGsi(g.name)), localOutboxIndex()],
    StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW },
  };
}

/** An overloaded GSI as CreateTable / UpdateTable take it (DynamoDB Local). */
export function localGsi(name: GsiName) {
  return {
    IndexName: name as string,
    KeySchema: [
      { AttributeName: gsiKeys(name).partitionKey, KeyType: 'HASH' as const },
      { AttributeName: gsiKeys(name).sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: ALL_GSIS.find((g) => g.name === name)!.projection as 'ALL' | 'KEYS_ONLY' },
  };
}

/** The outbox index as CreateTable / UpdateTable take it (DynamoDB Local). */
export function localOutboxIndex() {
  return {
    IndexName: OUTBOX_INDEX.name,
    KeySchema: [
      { AttributeName: OUTBOX_INDEX.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: OUTBOX_INDEX.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: { ProjectionType: 'KEYS_ONLY' as 'ALL' | 'KEYS_ONLY' },
  };
}

/**
 * The counters table: per-request bookkeeping that only lives for a window
 * (the rate-limit count of decisions §4). Not domain data, so not in the
 * single table: it has no stream (a request's count must not become a stream
 * record the outbox publisher reads and drops), no index and no backups, and
 * its items expire by TTL. Same key attributes as the main table, so the key
 * builders of keys.ts serve it.
 */
export const COUNTER_TABLE = { partitionKey: TABLE_KEYS.partitionKey, sortKey: TABLE_KEYS.sortKey, ttlAttribute: TTL_ATTRIBUTE } as const;

/** The counters table's name beside a main table's, locally (the CDK app lets CloudFormation name it). */
export const localCounterTableName = (tableName: string) => `${tableName}-counters`;

/** CreateTable input of the counters table for DynamoDB Local (the CDK app builds the same from COUNTER_TABLE). */
export function localCreateCounterTableInput(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [COUNTER_TABLE.partitionKey, COUNTER_TABLE.sortKey].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: COUNTER_TABLE.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: COUNTER_TABLE.sortKey, KeyType: 'RANGE' as const },
    ],
  };
}
