/**
 * `npm start`: the whole stack on local emulators, a demo account on an empty
 * store, and the credentials to make a first call.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JavaMissingError } from '../local/dynamodb-local.ts';
import { describeFaults, InvalidFaultsError } from '#shared/faults/settings.ts';
import { localSettings, startLocalStack } from '../local/stack.ts';
import { localSessionSecret } from '../local/session-secret.ts';

let settings: ReturnType<typeof localSettings>;
try {
  settings = localSettings();
} catch (err) {
  console.error(err instanceof InvalidFaultsError ? err.message : `Invalid settings: ${(err as Error).message}`);
  process.exit(1);
}
const sessionSecret = localSessionSecret(settings.dataDir);

let stack;
try {
  stack = await startLocalStack({ ...settings, sessionSecret });
} catch (err) {
  console.error(err instanceof JavaMissingError ? err.message : `Could not start the local stack: ${(err as Error).message}`);
  process.exit(1);
}

const accounts = await import('#shared/accounts/service.ts');
const { inboundAddress } = await import('#shared/email/addresses.ts');
const repo = await import('#shared/accounts/repository.ts');

// The demo key is shown once by the API, so the local stack keeps it in its data directory (the table holds only its hash).
const demoFile = join(settings.dataDir, 'demo-account.json');
let demo = await repo.getDemoMarker();
let apiKey: string;
if (!demo) {
  const created = await accounts.createAccount({ name: 'Demo Company', plan: 'paid', ownerEmail: 'owner@demo.example', ownerName: 'Demo Owner' });
  await repo.putDemoMarker(created.accountId, created.owner.id);
  demo = { accountId: created.accountId, userId: created.owner.id };
  apiKey = created.apiKey;
  writeFileSync(demoFile, JSON.stringify({ ...demo, apiKey }, null, 2), { mode: 0o600 });
} else {
  const saved = existsSync(demoFile) ? JSON.parse(readFileSync(demoFile, 'utf8')) : {};
  if (saved.accountId === demo.accountId && saved.apiKey) apiKey = saved.apiKey;
  else {
    apiKey = (await accounts.createApiKey(demo.accountId, demo.userId, 'npm start')).apiKey;
    writeFileSync(demoFile, JSON.stringify({ ...demo, apiKey }, null, 2), { mode: 0o600 });
  }
}
const session = await accounts.issueSessionToken(demo.accountId, demo.userId);
const base = `http://localhost:${settings.port}`;

console.log(`
Support Desk is running (local stack).

  Base URL:        ${base}
  API docs:        ${base}/docs   (OpenAPI: ${base}/openapi.json)
  Health:          ${base}/health
  DynamoDB Local:  ${stack.dynamodbEndpoint}   data in ${settings.dataDir}
  SQS (fauxqs):    ${stack.sqsEndpoint}   event pipeline running (webhooks, email, enrichment; see docs/events.md)
  SMTP (inbound):  localhost:${stack.smtp.port}   mail to ${inboundAddress(demo.accountId, stack.smtp.domain)} becomes tickets (docs/email.md)
Faults: ${describeFaults(settings.faults)}${settings.faults.length ? '   (injected into the functions\' AWS SDK calls; README "Faults")' : ''}

  Demo account:    ${demo.accountId} (plan paid)
  Owner user:      ${demo.userId}
  Owner API key:   ${apiKey}
  Session token:   ${session.token}
                   (expires ${session.expiresAt})

First call:
  curl -s -H "Authorization: Bearer ${apiKey}" ${base}/playbook/api/v1/users/me

Admin CLI (same environment): npm run --silent admin -- create-account --name Acme --plan free --owner-email you@acme.example
Press Ctrl-C to stop.
`);

let stopping = false;
const stop = async (signal: NodeJS.Signals) => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping. Requests in flight are answered; events still queued are kept in ${settings.dataDir} and go out at the next start.`);
  await stack.stop();
  if (settings.faults.length) {
    const counts = stack.injectedFaults();
    const kinds = settings.faults.map((f) => `${f.service}:${f.kind} ${counts[`${f.service}:${f.kind}`] ?? 0}`);
    console.log(`Faults injected: ${kinds.join(', ')}`);
  }
  process.exit(0);
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
