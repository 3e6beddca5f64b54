import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, StreamViewType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { ALL_GSIS, COUNTER_TABLE, gsiKeys, OUTBOX_INDEX, STREAM_VIEW, TABLE_KEYS, TTL_ATTRIBUTE } from '#shared/db/table-definition.ts';
import type { StageConfig } from './config.ts';
import { nagAck } from './nag.ts';

/**
 * What the stack keeps: the one table (same definition as the local stack,
 * shared/db/table-definition.ts), the rate-limit counters and the session
 * secret. Built in the stack's own scope, so the resources keep the logical
 * ids they were deployed with (the table is retained and deletion-protected).
 */
export class Data {
  readonly table: Table;
  /** Per-request counters that live for a window (rate limits): no stream, TTL (shared/db/table-definition.ts). */
  readonly counters: Table;
  /** HS256 key of session tokens and cursor signatures. */
  readonly sessionSecret: Secret;

  constructor(scope: Stack, props: { config: StageConfig }) {
    this.table = new Table(scope, 'Table', {
      partitionKey: { name: TABLE_KEYS.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      stream: StreamViewType[STREAM_VIEW],
      timeToLiveAttribute: TTL_ATTRIBUTE,
      deletionProtection: true,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // Keys-only view indexes beyond config.viewIndexes are left for a later deploy (one GSI per CloudFormation update).
    const views = ALL_GSIS.filter((g) => g.projection === 'KEYS_ONLY').slice(props.config.viewIndexes);
    for (const g of ALL_GSIS.filter((x) => !views.includes(x))) {
      const k = gsiKeys(g.name);
      this.table.addGlobalSecondaryIndex({
        indexName: g.name,
        partitionKey: { name: k.partitionKey, type: AttributeType.STRING },
        sortKey: { name: k.sortKey, type: AttributeType.STRING },
        projectionType: g.projection === 'KEYS_ONLY' ? ProjectionType.KEYS_ONLY : ProjectionType.ALL,
      });
    }
    // The sweeper's work list: write-sharded pending partitions, keys only (it fetches the items it publishes).
    this.table.addGlobalSecondaryIndex({
      indexName: OUTBOX_INDEX.name,
      partitionKey: { name: OUTBOX_INDEX.partitionKey, type: AttributeType.STRING },
      sortKey: { name: OUTBOX_INDEX.sortKey, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });

    // Rate-limit windows: one UpdateItem per API request, kept off the main table's stream (the outbox publisher's
    // shards carry events only). Items expire by TTL a minute after their window; nothing to back up or retain.
    this.counters = new Table(scope, 'Counters', {
      partitionKey: { name: COUNTER_TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: COUNTER_TABLE.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: COUNTER_TABLE.ttlAttribute,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    nagAck(this.counters, 'DDB3', 'Counters of the current minute only (rate-limit windows), expired by TTL; there is nothing to restore to a point in time.');

    this.sessionSecret = new Secret(scope, 'SessionSecret', {
      description: 'HS256 key for session tokens and cursor signatures',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
    });
    nagAck(
      this.sessionSecret,
      'SMG4',
      'A schedule needs a rotation Lambda and Secrets Manager hosts none for a generic key; an operator rotates with put-secret-value, functions still accept the previous version (docs/infrastructure.md, Rotating the session secret).',
    );
  }
}
