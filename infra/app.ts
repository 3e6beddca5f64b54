import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { stageConfig, stackNameOf } from './config.ts';
import { SupportDeskStack } from './stack.ts';

/**
 * `npx cdk synth` / `npx cdk deploy`. The stages are declared in cdk.json
 * (context `stages`: name -> settings, typed by infra/config.ts); every stage is
 * one stack `SupportDesk-<stage>`. `-c stage=prod` builds only that one.
 */
const app = new App();
const stages = (app.node.tryGetContext('stages') ?? {}) as Record<string, unknown>;
const only = app.node.tryGetContext('stage') as string | undefined;
if (only && !(only in stages)) throw new Error(`No stage "${only}" in cdk.json (context.stages has: ${Object.keys(stages).join(', ') || 'none'})`);
for (const [stage, settings] of Object.entries(stages)) {
  if (only && stage !== only) continue;
  const config = stageConfig({ ...(settings as object), stage });
  new SupportDeskStack(app, stackNameOf(stage), { config, description: `Support Desk (${stage})` });
}
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
