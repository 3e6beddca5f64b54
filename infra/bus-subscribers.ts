import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { Archive, EventBusPolicy, type EventBus } from 'aws-cdk-lib/aws-events';
import { CfnRegistry, CfnSchema } from 'aws-cdk-lib/aws-eventschemas';
import { AccountPrincipal, PolicyStatement, StarPrincipal, type IPrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { PUBLISHED_EVENTS, PUBLISHED_SOURCES, registrySchema } from '#app/event-catalog.ts';
import type { StageConfig } from './config.ts';

/** What the bus policy lets a subscriber account do with the rules it created (besides creating them). */
export const SUBSCRIBER_RULE_ACTIONS = ['events:PutTargets', 'events:RemoveTargets', 'events:DescribeRule', 'events:DeleteRule', 'events:EnableRule', 'events:DisableRule'] as const;

/**
 * What EventBridge subscribers (the teams that consume ticket events, often
 * from their own AWS accounts) get besides the bus itself (docs/events.md,
 * "For EventBridge subscribers"):
 * - a schema registry with one JSONSchemaDraft4 schema per published
 *   detail-type, generated from the zod schemas (app/event-catalog.ts);
 * - a bus policy that lets the stage's subscriber accounts (or organization)
 *   create rules on the bus for the published sources and manage the rules they
 *   created, as AWS documents for cross-account rules, and nothing else (no
 *   PutEvents, nobody else's rules);
 * - an archive of the published events, so a replay can deliver again what a
 *   subscriber missed.
 *
 * The registry, its schemas and the bus policy live in a nested stack: the
 * service's stack is close to CloudFormation's 500 resources, and this way
 * they cost it one. The archive stays in the service's stack, where the local
 * stack reads it (local/lambda/deployment.ts).
 */
export class BusSubscribers extends Construct {
  readonly registryName: string;
  /** The nested stack of the registry, its schemas and the bus policy. */
  readonly schemas: NestedStack;
  readonly archive: Archive;

  constructor(scope: Construct, id: string, props: { bus: EventBus; config: StageConfig }) {
    super(scope, id);
    const { bus, config } = props;
    const stack = Stack.of(this);

    this.archive = new Archive(this, 'Archive', {
      sourceEventBus: bus,
      archiveName: `${stack.stackName}-archive`,
      description: 'Published events, for replays into a rule that missed them (docs/events.md, "Replay")',
      eventPattern: { source: [...PUBLISHED_SOURCES] },
      retention: Duration.days(config.eventArchiveRetentionDays),
    });

    this.schemas = new NestedStack(this, 'Schemas', { description: `Event schemas and subscriber access of ${stack.stackName}'s bus` });
    this.registryName = `${stack.stackName}-events`;
    const registry = new CfnRegistry(this.schemas, 'Registry', {
      registryName: this.registryName,
      description: `Events published on ${stack.stackName}'s bus for subscribers (docs/events.md)`,
    });
    for (const e of PUBLISHED_EVENTS) {
      const schema = new CfnSchema(this.schemas, `Schema-${e.detailType}`, {
        registryName: registry.attrRegistryName,
        schemaName: e.schemaName,
        type: 'JSONSchemaDraft4',
        description: e.emitted,
        content: JSON.stringify(registrySchema(e)),
      });
      schema.addResourceDependency(registry);
    }

    const { accounts, organizationId } = config.eventSubscribers;
    const rules = stack.formatArn({ service: 'events', resource: 'rule', resourceName: `${bus.eventBusName}/*` });
    const policy = (sid: string, statement: Omit<ConstructorParameters<typeof PolicyStatement>[0] & object, 'sid'>) =>
      // The construct takes the statement as JSON (as the bus's own addToResourcePolicy hands it over).
      new EventBusPolicy(this.schemas, sid, { eventBus: bus, statementId: sid, statement: new PolicyStatement({ ...statement, sid }).toJSON() });
    const grant = (sid: string, principals: IPrincipal[], orgCondition: Record<string, unknown>) => {
      // Rules they create match only the published sources: a pattern must name a source, and only those.
      policy(`${sid}CreateRules`, {
        principals,
        actions: ['events:PutRule'],
        resources: [rules],
        conditions: {
          ...orgCondition,
          StringEqualsIfExists: { 'events:creatorAccount': '${aws:PrincipalAccount}' },
          'ForAllValues:StringEquals': { 'events:source': [...PUBLISHED_SOURCES] },
          Null: { 'events:source': 'false' },
        },
      });
      // Targets, updates and removal of the rules their own account created, never anyone else's.
      policy(`${sid}ManageOwnRules`, {
        principals,
        actions: [...SUBSCRIBER_RULE_ACTIONS],
        resources: [rules],
        conditions: { ...orgCondition, StringEqualsIfExists: { 'events:creatorAccount': '${aws:PrincipalAccount}' } },
      });
    };
    if (accounts.length)
      grant(
        'SubscriberAccounts',
        accounts.map((a) => new AccountPrincipal(a)),
        {},
      );
    if (organizationId) grant('SubscriberOrganization', [new StarPrincipal()], { StringEquals: { 'aws:PrincipalOrgID': organizationId } });
  }
}
