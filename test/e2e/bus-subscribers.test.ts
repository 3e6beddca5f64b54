/**
 * What an EventBridge subscriber relies on, against the local stack: the
 * events the pipeline really emits (recorded by the bus archive, as
 * EventBridge archives them) match the synthesized registry schemas; the
 * subscriber example's rule gets ticket.resolved and nothing else; and a
 * replay (`npm run admin -- replay`) delivers archived events again into a
 * subscriber's rule.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileSqsEndpoint } from '../support/file-sqs.ts';
import { runDeployment } from '../support/deployment.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { EventBridgeClient, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import AjvDraft04 from 'ajv-draft-04';
import ajvFormats from 'ajv-formats';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalArchive, type BusEvent } from '../../local/archive.ts';
import { matchesPattern } from '../../local/lambda/patterns.ts';
import { LOCAL_STAGE } from '../../local/lambda/template.ts';
import { LOCAL_ENDPOINTS_FILE, type LocalEndpoints } from '../../local/stack.ts';
import { TicketResolvedSubscriber } from '../../docs/examples/ticket-resolved-subscriber.ts';
import { eventually } from '../support/wait.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, TICKETS } from '../support/desk.ts';
import { archiveBusTo, localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { runScript } from '../support/processes.ts';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { storedSlaState, surveyTokenInStore } from '../support/store.ts';

const scratch = mkdtempSync(join(tmpdir(), 'bus-subscribers-'));
archiveBusTo(join(scratch, 'archive'));
const { client } = useGateway();
const { account, pipeline } = usePipeline(['sla', 'webhook-fanout', 'webhook-delivery', 'bulk-jobs']);
const receiver = useReceiver();
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
const sqs = new SQSClient({ region: 'us-east-1', endpoint: fileSqsEndpoint(), credentials });
const SUBSCRIBER_RULE = `subscriber-ticket-resolved-${process.pid}`;

/** The subscriber example's rule on our bus, as its stack synthesizes it (docs/examples/ticket-resolved-subscriber.ts). */
function subscriberExamplePattern(busArn: string): Record<string, unknown> {
  const app = new App();
  const stack = new TicketResolvedSubscriber(app, 'Subscriber', { env: { account: '333333333333', region: 'us-east-1' }, supportDeskBusArn: busArn });
  const rules = Object.values(Template.fromStack(stack).toJSON().Resources as Record<string, any>).filter((r) => r.Type === 'AWS::Events::Rule' && r.Properties.EventBusName === busArn);
  expect(rules).toHaveLength(1);
  return rules[0].Properties.EventPattern;
}

/**
 * The registry schemas of the local stage, as the CDK app synthesizes them, by detail-type: from the template this run
 * synthesized for the local stage (global setup; its nested stacks folded in), which the stack under test runs, rather
 * than a second synth of the same stage here.
 */
function registrySchemas(): Map<string, Record<string, unknown>> {
  const { templateFile } = runDeployment();
  const template = JSON.parse(readFileSync(templateFile, 'utf8')) as { Resources: Record<string, any> };
  const schemas = Object.values(template.Resources).filter((r) => r.Type === 'AWS::EventSchemas::Schema');
  return new Map(schemas.map((s) => [JSON.parse(s.Properties.Content)['x-amazon-events-detail-type'], JSON.parse(s.Properties.Content)]));
}

async function queue(name: string) {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name }));
  return { url: QueueUrl!, arn: `arn:aws:sqs:us-east-1:${LOCAL_STAGE.account}:${name}` };
}

/** Receive (and delete) what a queue holds until `done` says enough, then, once the pipeline is drained, whatever else it holds. */
async function receiveAll(url: string, done: (got: BusEvent[]) => boolean): Promise<BusEvent[]> {
  const got: BusEvent[] = [];
  const receive = async () => {
    const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    for (const m of out.Messages ?? []) {
      got.push(JSON.parse(m.Body!));
      await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle! }));
    }
    return out.Messages?.length ?? 0;
  };
  await eventually(async () => (await receive(), done(got)), 15_000, 'messages in the subscriber queue');
  await pipeline().drained();
  while (await receive());
  return got;
}

let a: TestAccount;
let busArn: string;
let subscriberQueue: { url: string; arn: string };
let resolvedTicketId: string;
let started: Date;
/** The file's account's events in the archive, as the bus received them. */
let archived: BusEvent[] = [];

const PUBLISHED = [
  'ticket.created',
  'ticket.updated',
  'ticket.assignment.changed',
  'ticket.resolved',
  'ticket.deleted',
  'ticket.merged',
  'ticket.rated',
  'message.created',
  'organization.created',
  'organization.deleted',
  'sla.breached',
  'webhook.disabled',
];

beforeAll(async () => {
  const lambda = await localLambda();
  busArn = lambda.busArn;
  started = new Date(Math.floor(Date.now() / 1000) * 1000);
  // A subscriber's rule on the bus, with the example's pattern and an SQS target, as its stack would create it.
  const eventBridge = new EventBridgeClient({ region: 'us-east-1', endpoint: lambda.eventBridgeEndpoint, credentials });
  subscriberQueue = await queue(`${SUBSCRIBER_RULE}-${Date.now()}`);
  await eventBridge.send(new PutRuleCommand({ Name: SUBSCRIBER_RULE, EventBusName: busArn, EventPattern: JSON.stringify(subscriberExamplePattern(busArn)) }));
  const put = await eventBridge.send(new PutTargetsCommand({ Rule: SUBSCRIBER_RULE, EventBusName: busArn, Targets: [{ Id: 'queue', Arn: subscriberQueue.arn }] }));
  expect(put.FailedEntryCount).toBe(0);

  // Every published event type, through the API and the pipeline.
  a = await account();
  const d = as(client, a.ownerKey);
  // A webhook whose target answers 410 is switched off by its first delivery: webhook.disabled.
  const gone = await d.post('/helpdesk/api/v1/webhooks', { webhook: { name: 'Gone', targetUrl: receiver().url('/gone'), events: ['ticket.created'] } });
  expect(gone.status, gone.text).toBe(201);
  receiver().endpoint('/gone', gone.body.webhook.signingSecret, () => ({ status: 410 }));
  const session = await a.session(a.ownerId);
  const minute = { urgent: 1, high: 1, normal: 1, low: 1 };
  const policy = await d.post('/helpdesk/api/sla-policies', {
    name: 'Fast',
    timeMode: 'calendarHours',
    conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }],
    targets: { firstReply: minute, nextReply: minute, resolution: { urgent: 600, high: 600, normal: 600, low: 600 } },
  });
  expect(policy.status, policy.text).toBe(201);
  const ticket = await newTicket(d, { subject: 'Resolve me' });
  resolvedTicketId = ticket.id;
  const put1 = await d.put(`${TICKETS}/${ticket.id}`, { ticket: { priority: 'high', assigneeId: a.ownerId } });
  expect(put1.status, put1.text).toBe(200);
  const message = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.id, type: 'note', content: '<p>Looked into it</p>', send_email: false } });
  expect(message.status, message.text).toBe(201);
  expect((await d.put(`${TICKETS}/${ticket.id}`, { ticket: { status: 'resolved' } })).status).toBe(200);
  // The resolved ticket rated from its survey link (ticket.rated), and a duplicate merged into another ticket by a job (ticket.merged).
  const rated = await client.request('GET', `/helpdesk/satisfaction/${await surveyTokenInStore(a.accountId, ticket.id)}?score=good`);
  expect(rated.status, rated.text).toBe(200);
  const [keep, duplicate] = [await newTicket(d, { subject: 'Keep me' }), await newTicket(d, { subject: 'Same again' })];
  const merge = await d.post(`${TICKETS}/${keep.id}/merge`, { ids: [duplicate.id] });
  expect(merge.status, merge.text).toBe(202);
  const org = await d.post('/helpdesk/api/organizations', { name: 'Acme', organizationalDomain: `acme-${a.accountId.toLowerCase().replace(/[^a-z0-9]/g, '')}.example` });
  expect(org.status, org.text).toBe(201);
  expect((await d.del(`/helpdesk/api/organizations/${org.body.data.id}`)).status).toBe(204);

  // A ticket left alone past its 1-minute first reply: the breach check a minute on reports it.
  const late = await newTicket(d, { subject: 'Nobody answers', tags: ['vip'] });
  await eventually(async () => (await storedSlaState(a.accountId, late.id))?.nextDueAt, 15_000, 'the SLA state of the late ticket');
  await pipeline().runSchedule('sla-breach-check', { time: new Date(Date.parse(late.createdAt) + 90_000).toISOString() });
  expect((await d.del(`${TICKETS}/${late.id}`)).status).toBe(204);

  const archive = new LocalArchive(join(scratch, 'archive'), lambda.deployment.archive!);
  let missing: string[] = [];
  await eventually(
    async () => {
      archived = [];
      // The breach check ran for a minute ahead, and its event carries that time.
      for await (const e of archive.read(started, new Date(Date.now() + 10 * 60_000))) if ((e.detail as { accountId?: string }).accountId === a.accountId) archived.push(e);
      const types = new Set(archived.map((e) => e['detail-type']));
      missing = PUBLISHED.filter((t) => !types.has(t));
      return !missing.length;
    },
    20_000,
    'every published event type in the archive',
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${missing.join(', ')} missing`);
  });
}, 90_000);

describe('EventBridge subscribers, against the local stack', () => {
  it('each registry schema accepts every event of its detail-type the pipeline emitted (and refuses a malformed one)', () => {
    const schemas = registrySchemas();
    expect([...schemas.keys()].sort()).toEqual([...PUBLISHED].sort());
    // CommonJS modules whose default export is the module itself: the class / plugin is also its `default`.
    const ajv = new AjvDraft04.default({ allErrors: true, strict: false });
    ajvFormats.default(ajv);
    const validators = new Map([...schemas].map(([type, s]) => [type, ajv.compile(s)]));
    for (const event of archived) {
      const validate = validators.get(event['detail-type'])!;
      expect(validate(event), `${event['detail-type']}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(event).slice(0, 600)}`).toBe(true);
    }
    expect(new Set(archived.map((e) => e['detail-type']))).toEqual(new Set(PUBLISHED));
    // Not vacuous: a ticket.resolved without its ticket's status, or with a field the schema does not describe, fails.
    const resolved = archived.find((e) => e['detail-type'] === 'ticket.resolved')!;
    const { status: _s, ...noStatus } = (resolved.detail as any).data.ticket;
    expect(validators.get('ticket.resolved')!({ ...resolved, detail: { ...(resolved.detail as object), data: { ticket: noStatus } } })).toBe(false);
    expect(validators.get('ticket.resolved')!({ ...resolved, detail: { ...(resolved.detail as object), surprise: 1 } })).toBe(false);
  });

  it("the subscriber example's pattern matches the ticket.resolved events and no other type; its rule received exactly that", async () => {
    const pattern = subscriberExamplePattern(busArn);
    for (const event of archived) expect(matchesPattern(pattern, event), event['detail-type']).toBe(event['detail-type'] === 'ticket.resolved');
    const got = await receiveAll(subscriberQueue.url, (g) => g.length >= 1);
    expect(got.map((e) => [e['detail-type'], (e.detail as any).data.ticket.id])).toEqual([['ticket.resolved', resolvedTicketId]]);
  });

  it('npm run admin -- replay delivers the archived events again into the named rule, with replay-name; --detail-type narrows it', async () => {
    const lambda = await localLambda();
    const dataDir = join(scratch, 'data');
    const endpoints: LocalEndpoints = {
      sqsEndpoint: fileSqsEndpoint(),
      eventBridgeEndpoint: lambda.eventBridgeEndpoint,
      busName: lambda.deployment.busName,
      busArn,
      archiveArn: lambda.archiveArn,
    };
    rmSync(dataDir, { recursive: true, force: true });
    (await import('node:fs')).mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, LOCAL_ENDPOINTS_FILE), JSON.stringify(endpoints));
    const admin = (...args: string[]) => runScript('scripts/admin.ts', ['replay', '--from', started.toISOString(), '--to', new Date(Date.now() + 2000).toISOString(), ...args], { DATA_DIR: dataDir });

    const original = archived.find((e) => e['detail-type'] === 'ticket.resolved')!;
    const first = await admin('--rule', SUBSCRIBER_RULE);
    expect(first.code, first.stderr).toBe(0);
    const out = JSON.parse(first.stdout);
    expect(out).toMatchObject({ state: 'COMPLETED', rules: [`${busArn.replace(':event-bus/', ':rule/')}/${SUBSCRIBER_RULE}`] });
    const again = await receiveAll(subscriberQueue.url, (g) => g.length >= 1);
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ 'detail-type': 'ticket.resolved', 'replay-name': out.replayName, detail: { eventId: (original.detail as any).eventId } });

    // Another subscriber rule for every ticket event: a replay narrowed to ticket.updated brings only those.
    const eventBridge = new EventBridgeClient({ region: 'us-east-1', endpoint: lambda.eventBridgeEndpoint, credentials });
    const all = await queue(`${SUBSCRIBER_RULE}-all-${Date.now()}`);
    await eventBridge.send(new PutRuleCommand({ Name: `${SUBSCRIBER_RULE}-all`, EventBusName: busArn, EventPattern: JSON.stringify({ source: ['support-desk.tickets'] }) }));
    await eventBridge.send(new PutTargetsCommand({ Rule: `${SUBSCRIBER_RULE}-all`, EventBusName: busArn, Targets: [{ Id: 'all', Arn: all.arn }] }));
    // A replay into a rule that does not exist, alongside (it delivers nothing, so it cannot reach either queue).
    const refusing = admin('--rule', 'no-such-rule');
    const second = await admin('--rule', `${SUBSCRIBER_RULE}-all`, '--detail-type', 'ticket.updated');
    expect(second.code, second.stderr).toBe(0);
    const updated = archived.filter((e) => e['detail-type'] === 'ticket.updated');
    const replayed = await receiveAll(all.url, (g) => g.length >= updated.length);
    expect(replayed.map((e) => (e.detail as any).eventId).sort()).toEqual(updated.map((e) => (e.detail as any).eventId).sort());
    expect(replayed.every((e) => e['replay-name'] === JSON.parse(second.stdout).replayName)).toBe(true);
    // The first rule got nothing this time, and a rule that does not exist is refused.
    expect(await receiveAll(subscriberQueue.url, () => true)).toEqual([]);
    const refused = await refusing;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/FilterArns.*no-such-rule/);
  }, 60_000);
});
