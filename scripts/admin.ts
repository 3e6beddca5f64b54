/**
 * Admin CLI (decisions §2): does what a dashboard would. Prints exactly one
 * JSON object on stdout and exits 0, or an error on stderr and exits 1.
 *
 * Local stack (default): same environment as `npm start` (DYNAMODB_PORT, DATA_DIR;
 * the running stack's queues and bus are found under DATA_DIR, SQS_PORT overrides the queues).
 * Deployed stack: set ADMIN_TARGET=aws with AWS_REGION and STACK_NAME (e.g.
 * SupportDesk-prod); TABLE_NAME, SESSION_SECRET_ARN and EVENT_BUS_NAME come
 * from the stack's outputs unless set explicitly, and API Gateway keys go to
 * the usage plans of its `UsagePlan-<plan>` outputs (named <stackName>-<plan>).
 */
import { parseArgs } from 'node:util';
import * as z from '#shared/zod.ts';
import { PLANS } from '#shared/auth/principal.ts';
import { authorizerCacheEnv } from '../local/lambda/index.ts';
import { configureLocalEnv, localEndpoints, localSettings } from '../local/stack.ts';
import { localSessionSecret } from '../local/session-secret.ts';

const USAGE = `usage: npm run --silent admin -- <command> [options]
  help           (or --help, -h) this text on stdout
  create-account --name NAME --plan free|paid|enterprise --owner-email EMAIL [--owner-name NAME]
  create-api-key --account ACCOUNT_ID --user USER_ID [--name NAME] [--scopes SCOPE,...] [--expires-at ISO]
                 scopes: users:read, users:write, desk:read, desk:write (default all four); expiry at most 1 year ahead (default none)
  revoke-api-key --account ACCOUNT_ID --key KEY_ID
  session-token  --account ACCOUNT_ID --user USER_ID [--ttl SECONDS]
  set-plan       --account ACCOUNT_ID --plan PLAN
  list-parked    [--limit N]                       parked outbox events and dead-lettered messages (decisions §7)
  republish      --account ACCOUNT_ID --event EVENT_ID   publish a parked outbox event again (after the fix)
  redrive        --queue QUEUE --message MESSAGE_ID      move a dead-lettered message back to its queue
  reindex        --account ACCOUNT_ID | --all  [--background]
                 build the search words and ticket views of records written before them (idempotent, resumable);
                 in this process, or with --background one page per message on the stack's reindex queue
  replay         --from ISO --to ISO [--detail-type T]... [--rule RULE]... [--name NAME]
                 deliver archived events of [from, to) again (with replay-name) to the bus's rules (--rule: only those);
                 locally to the running stack's rules; with ADMIN_TARGET=aws an EventBridge replay, --rule required`;

class UsageError extends Error {}

const { positionals, values } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        'owner-email': { type: 'string' },
        'owner-name': { type: 'string' },
        account: { type: 'string' },
        user: { type: 'string' },
        key: { type: 'string' },
        scopes: { type: 'string' },
        'expires-at': { type: 'string' },
        ttl: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        limit: { type: 'string' },
        event: { type: 'string' },
        queue: { type: 'string' },
        message: { type: 'string' },
        from: { type: 'string' },
        to: { type: 'string' },
        'detail-type': { type: 'string', multiple: true },
        rule: { type: 'string', multiple: true },
        all: { type: 'boolean' },
        background: { type: 'boolean' },
      },
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${USAGE}`);
    process.exit(1);
  }
})();

// Help is an answer, not an error: stdout and exit 0, before anything is started or read.
if (values.help || positionals[0] === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const required = (name: 'name' | 'plan' | 'owner-email' | 'owner-name' | 'account' | 'user' | 'key' | 'ttl' | 'event' | 'queue' | 'message' | 'from' | 'to'): string => {
  const v = values[name];
  if (typeof v !== 'string' || !v.trim()) throw new UsageError(`--${name} is required`);
  return v.trim();
};
const plan = () => {
  const p = required('plan');
  if (!(PLANS as readonly string[]).includes(p)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  return p as (typeof PLANS)[number];
};

/** --scopes and --expires-at of create-api-key, checked as the API checks them (decisions §18). */
async function keyLimits() {
  const { ExpiresAtSchema, ScopesSchema } = await import('#shared/accounts/model.ts');
  const { SCOPES } = await import('#shared/auth/scopes.ts');
  const scopes = values.scopes === undefined ? undefined : ScopesSchema.safeParse(values.scopes.split(',').map((s) => s.trim()));
  if (scopes && !scopes.success) throw new UsageError(`--scopes must be a comma-separated list of ${SCOPES.join(', ')}`);
  const given = values['expires-at'];
  const expiresAt = given === undefined ? undefined : ExpiresAtSchema.safeParse(given.trim());
  if (expiresAt && !expiresAt.success) throw new UsageError(`--expires-at ${expiresAt.error.issues[0].message}`);
  return { scopes: scopes?.data, expiresAt: expiresAt?.data };
}

async function main(): Promise<unknown> {
  const command = positionals[0];
  if (!command) throw new UsageError('a command is required');
  const deployed = process.env.ADMIN_TARGET === 'aws';
  if (!deployed) {
    const settings = localSettings();
    // The queues and bus of the stack `npm start` runs on this DATA_DIR (SQS_PORT still wins for the queues).
    const running = localEndpoints(settings.dataDir);
    const sqsEndpoint = settings.sqsPort ? `http://127.0.0.1:${settings.sqsPort}` : running?.sqsEndpoint;
    configureLocalEnv({ dynamodbEndpoint: `http://127.0.0.1:${settings.dynamodbPort}`, sessionSecret: localSessionSecret(settings.dataDir), ...(sqsEndpoint ? { sqsEndpoint } : {}) });
    if (running)
      Object.assign(process.env, {
        EVENT_BUS_NAME: running.busName,
        AWS_ENDPOINT_URL_EVENTBRIDGE: running.eventBridgeEndpoint,
        ...(running.busArn ? { EVENT_BUS_ARN: running.busArn } : {}),
        ...(running.archiveArn ? { EVENT_ARCHIVE_ARN: running.archiveArn } : {}),
        // revoke-api-key and set-plan flush the running gateway's authorizer cache, as they flush API Gateway's.
        ...(running.apiGateway ? { AWS_ENDPOINT_URL_API_GATEWAY: running.apiGateway.endpoint, ...authorizerCacheEnv(running.apiGateway) } : {}),
      });
  }
  let planIds: ((p: (typeof PLANS)[number]) => Promise<string>) | undefined;
  if (deployed) {
    // Before anything reads the environment: the table and secret may come from the stack's outputs.
    const { awsStackOutputs, resolveDeployedTarget } = await import('./stack-outputs.ts');
    const target = await resolveDeployedTarget(process.env, await awsStackOutputs());
    Object.assign(process.env, target.env);
    planIds = target.planId;
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const { setSecretLoader } = await import('#shared/auth/secret.ts');
    const sm = new SecretsManagerClient({});
    setSecretLoader(async (SecretId, VersionStage) => (await sm.send(new GetSecretValueCommand({ SecretId, VersionStage }))).SecretString ?? '');
  }
  const accounts = await import('#shared/accounts/service.ts');
  const gateway = planIds ? await (await import('./usage-plans.ts')).awsGateway(planIds) : undefined;
  const plans = await import('./usage-plans.ts');

  switch (command) {
    case 'create-account': {
      const email = z.email().safeParse(required('owner-email'));
      if (!email.success) throw new UsageError('--owner-email must be a valid email address');
      const input = { name: required('name'), plan: plan(), ownerEmail: email.data, ownerName: values['owner-name'] };
      if (!gateway) return accounts.createAccount(input);
      // Key in its plan first, then the account with it; see usage-plans.ts for the ordering.
      const { newId } = await import('#shared/ids.ts');
      return plans.provisionAccount(gateway, accounts.createAccount, { ...input, accountId: newId('acct') });
    }
    case 'create-api-key':
      return accounts.createApiKey(required('account'), required('user'), values.name, await keyLimits());
    case 'revoke-api-key':
      return accounts.revokeApiKey(required('account'), required('key'));
    case 'session-token': {
      const ttl = values.ttl === undefined ? undefined : Number(values.ttl);
      if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1 || ttl > 30 * 24 * 3600)) throw new UsageError('--ttl must be a whole number of seconds, 1 to 2592000');
      return accounts.issueSessionToken(required('account'), required('user'), ttl);
    }
    case 'set-plan': {
      if (!gateway) return accounts.setPlan(required('account'), plan());
      // Through the service, so the plan change is audited (decisions §15) in the account's own write.
      const changed = await plans.changePlan(gateway, accounts, required('account'), plan());
      // The plan is in the cached authorizer answers: the account's next request must see the new one.
      await (await import('#shared/auth/authorizer-cache.ts')).flushAuthorizerCache();
      return changed;
    }
    case 'list-parked': {
      const limit = values.limit === undefined ? 100 : Number(values.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new UsageError('--limit must be a whole number, 1 to 1000');
      const { listParkedEvents } = await import('#shared/events/publisher.ts');
      const events = await listParkedEvents(limit);
      // Dead-letter queues are found by name: the local stack's (SQS_PORT), or set SQS queue names in AWS via the console.
      if (!process.env.SQS_ENDPOINT && !deployed) return { events, deadLetters: null, note: "set SQS_PORT to the running stack's SQS port to list dead-lettered messages" };
      const { listDeadLetters } = await import('#app/dead-letters.ts');
      return { events, deadLetters: await listDeadLetters(undefined, limit) };
    }
    case 'republish': {
      const { configuredBus } = await import('#shared/events/bus.ts');
      const { republishParkedEvent } = await import('#shared/events/publisher.ts');
      const outcome = await republishParkedEvent(await configuredBus(), required('account'), required('event'));
      if (outcome === 'not-found') throw new UsageError('no outbox event with that account and id (published events leave the outbox)');
      return { accountId: required('account'), eventId: required('event'), outcome };
    }
    case 'redrive': {
      const { QUEUES } = await import('#app/topology.ts');
      const queue = required('queue');
      const def = QUEUES.find((q) => q.name === queue);
      if (!def) throw new UsageError(`--queue must be one of ${QUEUES.map((q) => q.name).join(', ')}`);
      const { redriveDeadLetter } = await import('#app/dead-letters.ts');
      const outcome = await redriveDeadLetter(def.name, required('message'));
      if (outcome === 'not-found') throw new UsageError('no such message in the dead-letter queue');
      return { queue, messageId: required('message'), outcome };
    }
    case 'replay': {
      const when = (name: 'from' | 'to') => {
        const t = new Date(required(name));
        if (Number.isNaN(t.getTime())) throw new UsageError(`--${name} must be an ISO 8601 time, e.g. 2025-01-31T00:00:00Z`);
        return t;
      };
      const { from, to } = { from: when('from'), to: when('to') };
      if (from >= to) throw new UsageError('--from must be before --to');
      const archiveArn = process.env.EVENT_ARCHIVE_ARN;
      const busArn = process.env.EVENT_BUS_ARN;
      if (!archiveArn || !busArn)
        throw new UsageError(
          deployed
            ? `the stack has no EventArchiveArn / EventBusArn output (deploy this version) or set EVENT_ARCHIVE_ARN and EVENT_BUS_ARN`
            : 'no running local stack with an archive on this DATA_DIR; start it with npm start',
        );
      const rules = values.rule ?? [];
      const detailTypes = values['detail-type'] ?? [];
      // In AWS a replay without rules reaches every rule on the bus, our consumers and every subscriber's: name them.
      if (deployed && !rules.length) throw new UsageError('with ADMIN_TARGET=aws, name the rules to replay into (--rule ARN), e.g. the subscriber rule that missed the events');
      if (deployed && detailTypes.length) throw new UsageError('EventBridge replays every archived event of the window into the rules; --detail-type works locally only (filter in the rule)');
      const { replayArchive } = await import('./replay.ts');
      return replayArchive({ archiveArn, busArn, from, to, rules, detailTypes, name: values.name, wait: !deployed });
    }
    case 'reindex': {
      if (!values.all && !values.account) throw new UsageError('--account ACCOUNT_ID or --all is required');
      const reindex = await import('#shared/reindex/service.ts');
      const ids = values.all ? await accounts.listAccountIds() : [required('account')];
      if (values.background) {
        const queueUrl = await reindexQueueUrl(deployed);
        for (const id of ids) await reindex.enqueueReindex(queueUrl, reindex.reindexStart(id));
        return { queued: ids.length, queue: queueUrl };
      }
      const done: Record<string, unknown> = {};
      for (const id of ids) done[id] = await reindex.reindexAccount(id);
      return { accounts: done };
    }
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

/** The reindex queue of the target stack: the running local stack's (by name), or the deployed stack's output. */
async function reindexQueueUrl(deployed: boolean): Promise<string> {
  if (deployed) {
    const url = process.env.REINDEX_QUEUE_URL;
    if (!url) throw new UsageError('the stack has no ReindexQueueUrl output (deploy this version) or set REINDEX_QUEUE_URL');
    return url;
  }
  const { GetQueueUrlCommand } = await import('@aws-sdk/client-sqs');
  const { sqs } = await import('#shared/events/sqs-client.ts');
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: 'reindex' }))).QueueUrl!;
  } catch {
    throw new UsageError('no running local stack with a reindex queue on this DATA_DIR; start it with npm start, or reindex without --background');
  }
}

try {
  const out = await main();
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.exit(0);
} catch (err) {
  const e = err as Error;
  if (err instanceof UsageError) console.error(`error: ${e.message}\n${USAGE}`);
  else if (/ECONNREFUSED|connect/i.test(`${e.message} ${(e as { code?: string }).code ?? ''}`))
    console.error(`error: the local stack is not reachable (DYNAMODB_PORT=${process.env.DYNAMODB_PORT ?? 8000}); start it with npm start`);
  else console.error(`error: ${e.message}`);
  process.exit(1);
}
