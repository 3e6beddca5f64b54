import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { SupportDeskStack } from './stack.ts';

/**
 * `npx cdk synth` / `npx cdk deploy`. Context: `emailFrom` (SES identity for
 * response emails), `enrichmentUrl` / `enrichmentApiKey` (HTTP enrichment provider),
 * `authorizerCacheTtlSeconds` (opt-in authorizer cache, default 0).
 */
const app = new App();
new SupportDeskStack(app, app.node.tryGetContext('stackName') ?? 'SupportDesk', {
  emailFrom: app.node.tryGetContext('emailFrom'),
  authorizerCacheTtlSeconds: Number(app.node.tryGetContext('authorizerCacheTtlSeconds') ?? 0),
  enrichment: app.node.tryGetContext('enrichmentUrl') ? { provider: 'http', url: app.node.tryGetContext('enrichmentUrl'), apiKey: app.node.tryGetContext('enrichmentApiKey') } : { provider: 'none' },
});
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

