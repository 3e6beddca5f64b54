import { App, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { EventBus } from 'aws-cdk-lib/aws-events';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { BusSubscribers, SUBSCRIBER_RULE_ACTIONS } from '../../infra/bus-subscribers.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { PUBLISHED_EVENTS, PUBLISHED_SOURCES, registrySchema } from '#app/event-catalog.ts';
import { testStage } from '../support/stage.ts';

/** The service's stack of a stage (bundling skipped), its template and its nested subscriber stack's. */
function synth(overrides: Parameters<typeof testStage>[0] = {}) {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new SupportDeskStack(app, 'SupportDesk-test', { config: testStage(overrides) });
  return { main: Template.fromStack(stack).toJSON(), nested: Template.fromStack(stack.subscribers.schemas).toJSON() };
}
const ofType = (t: Record<string, any>, type: string): any[] => Object.values(t.Resources as Record<string, any>).filter((r) => r.Type === type);

const plain = synth();
const open = synth({ eventSubscribers: { accounts: ['111111111111', '222222222222'], organizationId: 'o-a1b2c3d4e5' }, eventArchiveRetentionDays: 7 });

describe('what EventBridge subscribers get from the stack', () => {
  it('a schema registry with one JSONSchemaDraft4 schema per published detail-type, generated from the zod schemas', () => {
    const [registry] = ofType(plain.nested, 'AWS::EventSchemas::Registry');
    expect(registry.Properties.RegistryName).toBe('SupportDesk-test-events');
    const schemas = ofType(plain.nested, 'AWS::EventSchemas::Schema');
    expect(schemas).toHaveLength(PUBLISHED_EVENTS.length);
    for (const e of PUBLISHED_EVENTS) {
      const s = schemas.find((x) => x.Properties.SchemaName === e.schemaName);
      expect(s, e.schemaName).toBeDefined();
      expect(s.Properties.Type).toBe('JSONSchemaDraft4');
      expect(JSON.parse(s.Properties.Content)).toEqual(registrySchema(e));
    }
    expect(plain.main.Outputs).toHaveProperty('EventSchemaRegistryName');
    // The registry costs the service's stack one resource (its nested stack), not ten: it is close to CloudFormation's 500.
    expect(ofType(plain.main, 'AWS::EventSchemas::Schema')).toHaveLength(0);
  });

  it('an archive of the published events with the stage retention (default 30 days)', () => {
    for (const [t, days] of [
      [plain.main, 30],
      [open.main, 7],
    ] as const) {
      const archives = ofType(t, 'AWS::Events::Archive');
      expect(archives).toHaveLength(1);
      expect(archives[0].Properties).toMatchObject({ ArchiveName: 'SupportDesk-test-archive', RetentionDays: days, EventPattern: { source: [...PUBLISHED_SOURCES] } });
      expect(archives[0].Properties.SourceArn['Fn::GetAtt'][0]).toMatch(/^Bus/);
    }
    expect(Object.keys(plain.main.Outputs)).toEqual(expect.arrayContaining(['EventBusName', 'EventBusArn', 'EventArchiveArn']));
  });

  it('no bus policy without subscribers in the stage', () => {
    expect(ofType(plain.nested, 'AWS::Events::EventBusPolicy')).toEqual([]);
    expect(ofType(plain.main, 'AWS::Events::EventBusPolicy')).toEqual([]);
  });

  it('subscriber accounts and the organization may create rules for the published sources and manage their own rules, nothing else', () => {
    const statements = ofType(open.nested, 'AWS::Events::EventBusPolicy').map((p) => p.Properties.Statement);
    expect(statements.map((s) => s.Sid).sort()).toEqual([
      'SubscriberAccountsCreateRules',
      'SubscriberAccountsManageOwnRules',
      'SubscriberOrganizationCreateRules',
      'SubscriberOrganizationManageOwnRules',
    ]);
    const actions = new Set(statements.flatMap((s) => [s.Action].flat()));
    expect(actions).toEqual(new Set(['events:PutRule', ...SUBSCRIBER_RULE_ACTIONS]));
    for (const s of statements) {
      expect(s.Effect).toBe('Allow');
      // Only rules on this bus, and only those the caller's own account created.
      expect(JSON.stringify(s.Resource)).toMatch(/:rule\/".*\/\*"/);
      expect(s.Condition.StringEqualsIfExists).toEqual({ 'events:creatorAccount': '${aws:PrincipalAccount}' });
      if (s.Action === 'events:PutRule') {
        expect(s.Condition['ForAllValues:StringEquals']).toEqual({ 'events:source': [...PUBLISHED_SOURCES] });
        expect(s.Condition.Null).toEqual({ 'events:source': 'false' });
      }
      if (s.Sid.startsWith('SubscriberOrganization')) {
        expect(s.Principal).toBe('*');
        expect(s.Condition.StringEquals).toEqual({ 'aws:PrincipalOrgID': 'o-a1b2c3d4e5' });
      } else {
        expect(JSON.stringify(s.Principal.AWS)).toMatch(/:iam::111111111111:root.*:iam::222222222222:root/);
      }
    }
    // No PutEvents (nor a wildcard) for anyone outside the stack.
    const all = JSON.stringify([open.main, open.nested].flatMap((t) => ofType(t, 'AWS::Events::EventBusPolicy')));
    expect(all).not.toMatch(/events:PutEvents|"events:\*"|"\*"\]?,"Effect"/);
  });

  it('cdk-nag (AwsSolutions) finds nothing on the registry, the schemas, the bus policy and the archive', () => {
    const app = new App();
    const stack = new Stack(app, 'Nag', { env: { account: '123456789012', region: 'eu-west-1' } });
    new BusSubscribers(stack, 'Subscribers', {
      bus: new EventBus(stack, 'Bus'),
      config: testStage({ eventSubscribers: { accounts: ['111111111111'], organizationId: 'o-a1b2c3d4e5' } }),
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    expect(() => app.synth()).not.toThrow();
  });
});
