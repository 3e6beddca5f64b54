/**
 * The single table's shape, shared by the CDK app and the local stack so the
 * two can never drift: key attributes, GSIs, stream and TTL.
 */
export const TABLE_KEYS = { partitionKey: 'pk', sortKey: 'sk' } as const;

/** Generic, overloaded GSIs; each access pattern documents which one it uses. */
export const GSI_NAMES = ['gsi1', 'gsi2', 'gsi3', 'gsi4'] as const;
export type GsiName = (typeof GSI_NAMES)[number];

export const gsiKeys = (name: GsiName) => ({ partitionKey: `${name}pk`, sortKey: `${name}sk` }) as const;

/** Items with this numeric attribute (epoch seconds) expire: rate-limit windows, idempotency records. */
export const TTL_ATTRIBUTE = 'expiresAt';

/** The stream carries new images: the outbox publisher reads event items from it. */
export const STREAM_VIEW = 'NEW_IMAGE' as const;

/** CreateTable input for DynamoDB Local (the CDK app builds the same table from the constants above). */
export function localCreateTableInput(tableName: string) {
  const attributes = new Set<string>([TABLE_KEYS.partitionKey, TABLE_KEYS.sortKey]);
  for (const g of GSI_NAMES) {
    attributes.add(gsiKeys(g).partitionKey);
    attributes.add(gsiKeys(g).sortKey);
  }
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [...attributes].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const })),
    KeySchema: [
      { AttributeName: TABLE_KEYS.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: TABLE_KEYS.sortKey, KeyType: 'RANGE' as const },
    ],
    GlobalSecondaryIndexes: GSI_NAMES.map((g) => ({
      IndexName: g,
      KeySchema: [
        { AttributeName: gsiKeys(g).partitionKey, KeyType: 'HASH' as const },
        { AttributeName: gsiKeys(g).sortKey, KeyType: 'RANGE' as const },
      ],
      Projection: { ProjectionType: 'ALL' as const },
    })),
    StreamSpecification: { StreamEnabled: true, StreamViewType: STREAM_VIEW },
  };
}
