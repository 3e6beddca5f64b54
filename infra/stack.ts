import { CfnOutput, Stack, type NestedStack, type StackProps } from 'aws-cdk-lib';
import type { SpecRestApi, UsagePlan } from 'aws-cdk-lib/aws-apigateway';
import type { ApiGroup } from '#app/registry.ts';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { Construct } from 'constructs';
import { Api, API_STAGE } from './api.ts';
import { BusSubscribers } from './bus-subscribers.ts';
import type { StageConfig } from './config.ts';
import { Data } from './data.ts';
import { EmailChannel } from './email.ts';
import { Functions } from './functions.ts';
import { Operations } from './operations.ts';
import { Parts } from './parts.ts';
import { Pipeline } from './pipeline.ts';
import { Uploads } from './uploads.ts';

export { API_STAGE, tierThrottle } from './api.ts';

export interface SupportDeskStackProps extends StackProps {
  /** The stage's typed settings (infra/config.ts). */
  config: StageConfig;
  /** The route table; default app/registry.ts's (tests add a route to it). */
  apiGroups?: readonly ApiGroup[];
}

/**
 * The whole service: one table, the REST API built from the route table (one
 * function per endpoint group behind a REQUEST authorizer), usage plans per
 * tier, the event bus, and the outbox -> EventBridge -> SQS pipeline built
 * from the topology table, with its alarms and dashboard.
 *
 * The parts (infra/data.ts, functions.ts, pipeline.ts, api.ts, operations.ts)
 * build into this stack's own scope rather than into constructs of their own:
 * a construct's id is part of the logical id of everything under it, so a new
 * level would replace every deployed resource, the retained table included.
 */
export class SupportDeskStack extends Stack {
  readonly table: Table;
  /** Per-request counters that live for a window (rate limits): no stream, TTL (shared/db/table-definition.ts). */
  readonly counters: Table;
  readonly api: SpecRestApi;
  readonly bus: EventBus;
  /** The schema registry, the subscribers' bus policy and the archive (infra/bus-subscribers.ts). */
  readonly subscribers: BusSubscribers;
  readonly usagePlans: Record<string, UsagePlan>;
  /** The bucket of uploads and attachments (infra/uploads.ts). */
  readonly uploads: Uploads;
  /** The nested stack of the alarms that carry no name (infra/operations.ts). */
  readonly alarms: NestedStack;
  /** The email channel's receiving and notifications, in its nested stack `Email` (infra/email.ts). */
  readonly email: EmailChannel;
  /** The features deployed as nested stacks of their own (infra/parts.ts). */
  readonly parts: Parts;

  constructor(scope: Construct, id: string, props: SupportDeskStackProps) {
    super(scope, id, { ...props, env: { account: props.config.account, region: props.config.region, ...props.env } });
    const { config } = props;

    const data = new Data(this, { config });
    this.table = data.table;
    this.counters = data.counters;
    this.bus = new EventBus(this, 'Bus', { eventBusName: `${this.stackName}-events` });
    // For subscribers: the schema registry, rules from the stage's subscriber accounts, the archive for replays.
    this.subscribers = new BusSubscribers(this, 'Subscribers', { bus: this.bus, config });
    // Uploads and attachments: one bucket; functions are told it and granted on it by what their bundles import.
    this.uploads = new Uploads(this, 'Uploads', { config });

    const functions = new Functions(this, { config, data, bus: this.bus, uploads: this.uploads });
    this.email = new EmailChannel(this, { config, functions, uploads: this.uploads });
    // Features deployed as nested stacks of their own (app/topology.ts StackPart): views.
    const parts = (this.parts = new Parts(this));
    const pipeline = new Pipeline(this, { config, table: this.table, bus: this.bus, functions, email: this.email, parts });
    const api = new Api(this, { config, functions, pipeline, parts, groups: props.apiGroups });
    this.api = api.api;
    this.usagePlans = api.usagePlans;
    this.alarms = new Operations(this, { config, table: this.table, api: this.api, bus: this.bus, pipeline, functions: functions.all }).alarms;
    functions.checkSettings();

    // --- What the platform team and the admin CLI need (scripts/stack-outputs.ts); queue URLs come from their rows.
    new CfnOutput(this, 'ApiUrl', { value: this.api.url });
    // The admin CLI's revoke-api-key and set-plan flush the authorizer cache with these.
    new CfnOutput(this, 'RestApiId', { value: this.api.restApiId });
    new CfnOutput(this, 'ApiStageName', { value: API_STAGE });
    new CfnOutput(this, 'AuthorizerCacheTtlSeconds', { value: String(config.authorizerCacheTtlSeconds) });
    new CfnOutput(this, 'TableName', { value: this.table.tableName });
    new CfnOutput(this, 'SessionSecretArn', { value: data.sessionSecret.secretArn });
    new CfnOutput(this, 'UploadsBucketName', { value: this.uploads.bucket.bucketName });
    new CfnOutput(this, 'EventBusName', { value: this.bus.eventBusName });
    new CfnOutput(this, 'EventBusArn', { value: this.bus.eventBusArn });
    new CfnOutput(this, 'EventArchiveArn', { value: this.subscribers.archive.archiveArn });
    new CfnOutput(this, 'EventSchemaRegistryName', { value: this.subscribers.registryName });
    // The email channel (docs/email.md): the domain the platform team points its MX at, the rule set it activates by
    // hand, and the domain identity's DKIM records (CNAME name and value, three of them).
    new CfnOutput(this, 'InboundDomain', { value: config.inboundDomain });
    new CfnOutput(this, 'ReceiptRuleSetName', { value: this.email.receiptRuleSetName });
    new CfnOutput(this, 'SesConfigurationSetName', { value: this.email.configurationSetName });
    new CfnOutput(this, 'InboundDkimRecords', {
      value: this.email.identity.dkimRecords.map((r) => `${r.name} CNAME ${r.value}`).join(' ; '),
    });
    for (const [plan, p] of Object.entries(this.usagePlans)) new CfnOutput(this, `UsagePlan-${plan}`, { value: p.usagePlanId });
  }
}
