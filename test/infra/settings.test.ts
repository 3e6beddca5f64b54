import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { API_GROUPS } from '#app/registry.ts';
import { QUEUES, SCHEDULES } from '#app/topology.ts';
import { stageConfig, stackNameOf } from '../../infra/config.ts';
import { bundles } from '../../infra/imports.ts';
import { ENTRY_METADATA, PROJECT_ROOT } from '../../infra/service-function.ts';
import { checkFunctionSettings, DECLARED_SETTINGS, settingsOf, settingsProblems } from '../../infra/settings.ts';
import { SupportDeskStack } from '../../infra/stack.ts';
import { withParts } from '../support/template.ts';

interface Fn {
  id: string;
  entry: string;
  variables: Record<string, unknown>;
}

// The stages as `cdk synth` builds them (cdk.json), without esbuild: what is checked is each template's environment.
const STAGES = Object.entries(JSON.parse(readFileSync(join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context.stages as Record<string, object>);
const synthesized: Record<string, { region: string; functions: Fn[] }> = {};
beforeAll(() => {
  for (const [stage, settings] of STAGES) {
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const config = stageConfig({ ...settings, stage });
    const resources = withParts(new SupportDeskStack(app, stackNameOf(stage), { config })).findResources('AWS::Lambda::Function');
    synthesized[stage] = {
      region: config.region,
      functions: Object.entries(resources).map(([logicalId, r]) => ({
        id: logicalId,
        entry: r.Metadata[ENTRY_METADATA],
        variables: r.Properties.Environment?.Variables ?? {},
      })),
    };
  }
}, 120_000);

/** A function by its construct id (`Group-webhooks` is the logical id `GroupwebhooksFn…`). */
const fnOf = (stage: string, id: string) => synthesized[stage].functions.find((f) => f.id.startsWith(`${id.replace(/[^A-Za-z0-9]/g, '')}Fn`))!;

describe('settings of the deployed functions', () => {
  it.each(STAGES.map(([stage]) => stage))('every function of %s has every variable its bundle requires', (stage) => {
    // Arrange
    const { region, functions } = synthesized[stage];
    // Every function app/ declares: the endpoint groups, the authorizer and the 404, a consumer per queue, the schedules, the publisher and its sweeper.
    expect(functions).toHaveLength(API_GROUPS.length + 2 + QUEUES.length + SCHEDULES.length + 2);

    // Act
    const problems = functions.flatMap((f) => settingsProblems(f.id, f.entry, f.variables, region));

    // Assert
    expect(problems).toEqual([]);
  });

  it.each(STAGES.map(([stage]) => stage))("no function of %s carries FAULTS: injected faults are the local stack's alone (decisions §19)", (stage) => {
    expect(synthesized[stage].functions.filter((f) => 'FAULTS' in f.variables).map((f) => f.id)).toEqual([]);
  });

  it('asks each function for the settings of the modules it bundles, not one schema for all', () => {
    const modules = (idPrefix: string) => settingsOf(fnOf('prod', idPrefix).entry).map((s) => s.module);

    expect(modules('Group-contacts')).toContain('shared/db/client.ts');
    expect(modules('Group-contacts')).not.toContain('shared/auth/secret.ts');
    expect(modules('AuthorizerFunction')).toContain('shared/auth/secret.ts');
    expect(modules('Group-webhooks')).toContain('functions/webhooks/handler.ts');
    expect(modules('Consumer-email-sender')).toContain('shared/email/port.ts');
    expect(modules('Group-tickets')).not.toContain('shared/email/port.ts');
    expect(modules('NotFound')).toEqual([]);
  });

  it('fails the synth when a function lacks a variable, naming the function, the variable and the module', () => {
    // Arrange: the webhooks API as prod synthesizes it, without the delivery queue's URL.
    const webhooks = fnOf('prod', 'Group-webhooks');
    const { WEBHOOK_DELIVERY_QUEUE_URL: _gone, ...variables } = webhooks.variables;

    // Act + Assert
    expect(() => checkFunctionSettings('Group-webhooks', webhooks.entry, variables, 'eu-west-1')).toThrow(
      'Invalid environment for function Group-webhooks: WEBHOOK_DELIVERY_QUEUE_URL is required (functions/webhooks/handler.ts)',
    );
  });

  it('fails the synth when a function verifying tokens has no session secret, or a table reader no table', () => {
    const authorizer = fnOf('prod', 'AuthorizerFunction');
    const { SESSION_SECRET_ARN: _secret, TABLE_NAME: _table, ...variables } = authorizer.variables;

    const problems = settingsProblems('AuthorizerFunction', authorizer.entry, variables, 'eu-west-1');

    expect(problems).toEqual(
      expect.arrayContaining([
        'Invalid environment for function AuthorizerFunction: SESSION_SECRET_ARN is required, or SESSION_SECRET locally (shared/auth/secret.ts)',
        'Invalid environment for function AuthorizerFunction: TABLE_NAME is required (shared/db/client.ts)',
      ]),
    );
  });
});

describe('settings declarations', () => {
  it('are each imported by the module they name, and import nothing but zod and the settings helper (the CDK app loads them)', () => {
    expect(DECLARED_SETTINGS.length).toBeGreaterThan(10);
    for (const { file, settings } of DECLARED_SETTINGS) {
      expect(bundles(settings.module, file), `${settings.module} reads ${file}`).toBe(true);
      const imports = [...readFileSync(join(PROJECT_ROOT, file), 'utf8').matchAll(/^import .* from '([^']+)';$/gm)].map((m) => m[1]);
      // zod as the codebase uses it (shared/zod.ts: zod/mini with its messages), imported relatively or by its alias.
      for (const i of imports) expect(i, file).toMatch(/^(\.\.?\/|#shared\/)zod\.ts$|config\/settings\.ts$/);
    }
  });

  it('are the one way functions read configuration: process.env appears only where it is not configuration', () => {
    // The reader itself; Powertools' own switch, which observability sets rather than reads.
    const allowed = ['shared/config/settings.ts', 'shared/observability.ts'];
    const files = ['shared', 'functions'].flatMap((dir) =>
      readdirSync(join(PROJECT_ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${dir}/${f}`),
    );
    const readers = files.filter((f) => !allowed.includes(f) && /process\.env/.test(readFileSync(join(PROJECT_ROOT, f), 'utf8')));
    expect(readers).toEqual([]);
  });
});
