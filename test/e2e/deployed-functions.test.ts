/**
 * Every function of the synthesized template, run from its bundle, handles a
 * real event at least once without failing (issue #17, item 3): each API
 * function answers a route through the gateway (behind the authorizer), the
 * catch-all answers an unknown path, the outbox publisher reads the table
 * stream, the sweeper and the scheduled jobs run, and each queue's consumer
 * gets the messages the bus routes to it. Each path is proved by its effect;
 * the counters of the running functions then show nothing was left out.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QueueName } from '#app/topology.ts';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { eventually } from '../support/wait.ts';
import { useGateway, type TestAccount } from '../support/api.ts';
import { as, FIELDS, newTicket, TICKETS, type Desk } from '../support/desk.ts';
import { addMembers, newGroup } from '../support/groups.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { storedSlaState, type StoredSlaState } from '../support/store.ts';
import { readOutbox } from '../support/mail.ts';
import { useSmtp } from '../support/smtp.ts';
import { inboundAddress } from '#shared/email/addresses.ts';

// The email sender writes its messages here (localOverlay); set before the functions start.
const emailDir = mkdtempSync(join(tmpdir(), 'sd-deployed-emails-'));
process.env.EMAIL_OUTBOX_DIR = emailDir;

const EVERY_QUEUE: readonly QueueName[] = [
  'webhook-fanout',
  'webhook-delivery',
  'email-sender',
  'enrichment',
  'automations',
  'automation-time-rules',
  'sla',
  'sla-recompute',
  'group-distribution',
  'attachment-cleanup',
  'reindex',
  'bulk-jobs',
];

const { client } = useGateway();
const { account, pipeline } = usePipeline(EVERY_QUEUE);
const receiver = useReceiver();
const smtp = useSmtp();

// Generous bounds: on a busy machine each function's first (cold) start takes seconds, and a path may chain four.
const WAIT_MS = 30_000;

/** The emails written so far (`.eml`, decisions §17), as a mail client reads them. */
const emails = () => readOutbox(emailDir);

/** A fresh account of this file's pipeline, its owner's desk and a session token (messages take only those). */
async function tenant(): Promise<{ acct: TestAccount; d: Desk; session: string }> {
  const acct = await account();
  return { acct, d: as(client, acct.ownerKey), session: await acct.session(acct.ownerId) };
}

function created(res: { status: number; text: string }, what: string) {
  if (res.status !== 201) throw new Error(`${what}: expected 201, got ${res.status} ${res.text}`);
}

/** webhooks API -> tickets API -> stream -> outbox publisher -> bus -> webhook-fanout -> webhook-delivery -> receiver. */
async function webhookDelivered() {
  const { d } = await tenant();
  const res = await d.post('/helpdesk/api/v1/webhooks', { webhook: { name: 'deployed', targetUrl: receiver().url('/deployed'), events: ['ticket.created'] } });
  created(res, 'create webhook');
  const endpoint = receiver().endpoint('/deployed', res.body.webhook.signingSecret);
  const ticket = await newTicket(d, { subject: 'Webhook me' });
  const delivery = await eventually(() => endpoint.received[0], WAIT_MS, 'the webhook delivery');
  expect(delivery.verified).toMatchObject({ event: 'ticket.created', data: { ticket: { id: ticket.id } } });
}

/** users API (invitation) and messages API (response with email) -> email-sender, twice over. */
async function emailsSent() {
  const { d, session } = await tenant();
  const invitee = `invitee.${Date.now()}@deployed.example`;
  created(await d.post('/playbook/api/v1/users', { email: invitee, name: 'Invitee', role: 'viewer' }), 'create user');
  const ticket = await newTicket(d, { subject: 'Where is my order', requesterEmail: 'buyer@deployed.example' });
  const message = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.id, type: 'response', content: '<p>On its way</p>' } });
  created(message, 'create message');
  await eventually(async () => (await emails()).some((e) => e.to[0] === invitee), WAIT_MS, 'the invitation email');
  await eventually(async () => (await emails()).some((e) => e.to[0] === 'buyer@deployed.example' && e.subject.includes(ticket.id)), WAIT_MS, 'the response email');
}

/** SMTP, as the SES receipt rule -> the inbound mail function (the 250 comes once it has returned). */
async function mailReceived() {
  const { acct } = await tenant();
  const to = inboundAddress(acct.accountId, smtp.domain());
  const info = await smtp.transport().sendMail({ from: 'casey@deployed.example', to, subject: 'Mail in', text: 'Hello support' });
  expect(info.accepted).toEqual([to]);
}

/** organizations API -> enrichment consumer fills the company facts. */
async function organizationEnriched() {
  const { d } = await tenant();
  const res = await d.post('/helpdesk/api/organizations', { name: 'Deployed Co', organizationalDomain: 'Spotify.com' });
  created(res, 'create organization');
  const org = await eventually(
    async () => {
      const got = await d.get(`/helpdesk/api/organizations/${res.body.data.id}`);
      return got.body.data.country ? got.body.data : null;
    },
    WAIT_MS,
    'the enrichment',
  );
  expect(org.country).toBe('Sweden');
}

const ticketOf = async (d: Desk, id: string) => (await d.get(`${TICKETS}/${id}`)).body.ticket;
const ticketWhere = (d: Desk, id: string, ok: (t: any) => boolean, what: string) =>
  eventually(
    async () => {
      const t = await ticketOf(d, id);
      return ok(t) ? t : null;
    },
    WAIT_MS,
    what,
  );

/**
 * automations API -> automations consumer (event rule); the hourly job -> automation-time-rules consumer (time rule).
 * The job runs at the real time (files share the table: a clock moved ahead would apply other files' time rules), so
 * the time rule holds at once; it is created after the event rule has handled the ticket, which it would otherwise close.
 */
async function automationsApplied() {
  const { d } = await tenant();
  const tagged = await d.post('/helpdesk/api/automations', {
    name: 'Mark auto',
    rule: { all: [{ field: 'tags', op: 'containsoneormoreof', value: ['auto'] }], actions: [{ field: 'addTags', value: ['seen'] }] },
  });
  created(tagged, 'create event automation');
  const ticket = await newTicket(d, { status: 'pending', tags: ['auto'] });
  await ticketWhere(d, ticket.id, (t) => t.tags.includes('seen'), 'the event automation');

  const timed = await d.post('/helpdesk/api/automations', {
    name: 'Close pending',
    rule: {
      all: [
        { field: 'hoursSinceUpdated', op: 'greaterthanorequalto', value: 0 },
        { field: 'status', op: 'equals', value: 'pending' },
      ],
      actions: [{ field: 'status', value: 'closed' }],
    },
  });
  created(timed, 'create time automation');
  const queued = (await pipeline().runSchedule('automation-time-rules')) as { tickets: number };
  expect(queued.tickets).toBeGreaterThanOrEqual(1);
  await ticketWhere(d, ticket.id, (t) => t.status === 'closed', 'the time automation');
}

/** groups API; adding a member frees capacity -> group-distribution assigns the waiting ticket. */
async function groupBackfilled() {
  const { acct, d } = await tenant();
  const agent = await acct.addUser('member');
  const group = await newGroup(d, { distributionMode: 'roundRobin', maxOpenTickets: 1 });
  const waiting = await newTicket(d, { groupId: group.id });
  expect(waiting.assigneeId).toBeNull();
  await addMembers(d, group.id, [agent.id]);
  await ticketWhere(d, waiting.id, (t) => t.assigneeId === agent.id, 'the backfill');
}

const slaStateWhere = (accountId: string, ticketId: string, ok: (s: StoredSlaState) => boolean, what: string) =>
  eventually(
    async () => {
      const s = await storedSlaState(accountId, ticketId);
      return s && ok(s) ? s : null;
    },
    WAIT_MS,
    what,
  );

/**
 * tickets -> sla consumer; sla-policies API recompute -> sla-recompute consumer; then the breach check, at the real
 * time (a clock moved ahead would breach other files' tickets early).
 */
async function slaKept() {
  const { acct, d } = await tenant();
  const targets = (n: number) => ({ urgent: n, high: n, normal: n, low: n });
  // An account keeps SLA states once it has had a policy (docs/decisions.md, "Fewer calls per event"): one no ticket matches.
  const other = await d.post('/helpdesk/api/sla-policies', {
    name: 'Other',
    timeMode: 'calendarHours',
    conditions: [{ field: 'tags', operator: 'contains_any', value: ['no-ticket-has-this'] }],
    targets: { firstReply: targets(60), nextReply: targets(30), resolution: targets(480) },
  });
  created(other, 'create SLA policy');
  const ticket = await newTicket(d, { tags: ['vip'] });
  await slaStateWhere(acct.accountId, ticket.id, () => true, 'the SLA state of the new ticket');
  const policy = await d.post('/helpdesk/api/sla-policies', {
    name: 'VIP',
    timeMode: 'calendarHours',
    conditions: [{ field: 'tags', operator: 'contains_any', value: ['vip'] }],
    targets: { firstReply: targets(60), nextReply: targets(30), resolution: targets(480) },
  });
  created(policy, 'create SLA policy');

  const recompute = await d.post('/helpdesk/api/sla-policies/recompute', {});
  expect(recompute.status, recompute.text).toBe(202);
  await slaStateWhere(acct.accountId, ticket.id, (s) => s.policy?.id === policy.body.data.id, 'the recompute');

  const check = (await pipeline().runSchedule('sla-breach-check')) as { checked: number };
  expect(check.checked).toEqual(expect.any(Number));
}

/** The API functions with no background path of their own, and the catch-all for unknown paths. */
/** tickets API (delete) -> stream -> outbox publisher -> bus -> attachment-cleanup. */
async function ticketCleanedUp() {
  const { d } = await tenant();
  const ticket = await newTicket(d, { subject: 'Delete me' });
  const res = await d.del(`/helpdesk/api/v1/tickets/${ticket.id}`);
  expect(res.status, res.text).toBe(204);
  const cleanup = (await localLambda()).byEntry('functions/attachment-cleanup/handler.ts');
  await eventually(() => cleanup.invocations > 0, WAIT_MS, 'the attachment clean-up of the deleted ticket');
}

/** admin reindex, in the background: a step on the reindex queue -> the reindex consumer, which queues the next steps. */
async function reindexed() {
  const { acct, d } = await tenant();
  await newTicket(d, { subject: 'Indexed again' });
  const lambda = await localLambda();
  const queue = [...lambda.deployment.queues.values()].find((q) => q.name === 'reindex')!;
  const { enqueueReindex, reindexStart } = await import('#shared/reindex/service.ts');
  await enqueueReindex(lambda.queueUrl(queue.logicalId), reindexStart(acct.accountId));
  const consumer = lambda.byEntry('functions/reindex/handler.ts');
  // users, contacts, organizations, tickets: one step each for a small account.
  await eventually(() => consumer.invocations >= 4, WAIT_MS, 'the reindex steps of the account');
}

/** jobs API (bulk update) -> bulk-jobs consumer, which changes the tickets and completes the job the API answers. */
async function bulkJobCompleted() {
  const { d } = await tenant();
  const [a, b] = [await newTicket(d, { subject: 'Bulk one' }), await newTicket(d, { subject: 'Bulk two' })];
  const res = await d.post(`${TICKETS}/bulk_update`, { ids: [a.id, b.id], ticket: { priority: 'urgent' } });
  expect(res.status, res.text).toBe(202);
  const job = await eventually(
    async () => {
      const got = await d.get(`/helpdesk/api/v1/jobs/${res.body.job.id}`);
      return got.body.job?.status === 'completed' ? got.body.job : null;
    },
    WAIT_MS,
    'the bulk job',
  );
  expect(job).toMatchObject({ total: 2, succeeded: 2, failed: 0 });
  expect((await ticketOf(d, a.id)).priority).toBe('urgent');
}

async function readsAnswered() {
  const { d } = await tenant();
  const contacts = await d.get('/helpdesk/api/contacts');
  expect(contacts.status, contacts.text).toBe(200);
  const fields = await d.get(FIELDS);
  expect(fields.status, fields.text).toBe(200);
  const audits = await d.get('/helpdesk/api/v1/audits');
  expect(audits.status, audits.text).toBe(200);
  const exported = await d.get('/helpdesk/api/v1/exports/tickets?start_time=2020-01-01T00:00:00Z');
  expect(exported.status, exported.text).toBe(200);
  const unknown = await client.request('GET', '/helpdesk/api/v1/no-such-route');
  expect(unknown.status, unknown.text).toBe(404);
}

/** This round's paths: views API -> view-recount (a new view) and view-counts (a ticket event); the public satisfaction page; the retention and view-time schedules. */
async function roundFiveRan() {
  const { d } = await tenant();
  const view = await d.post('/helpdesk/api/v1/views', { view: { title: 'Open', conditions: { all: [{ field: 'status', operator: 'is', value: 'open' }], any: [] } } });
  expect(view.status, view.text).toBe(201);
  await newTicket(d, { subject: 'Counted' });
  const lambda = await localLambda();
  const counts = lambda.byEntry('functions/view-counts/handler.ts');
  const recount = lambda.byEntry('functions/view-counts/recount.ts');
  // The queue consumers from their bundles with an empty batch (their pipeline paths are views.test.ts's).
  for (const fn of [counts, recount]) expect(await fn.invoke({ Records: [] })).toMatchObject({ batchItemFailures: [] });
  const page = await client.request('GET', '/helpdesk/satisfaction/no-such-token?score=good');
  expect(page.status).toBe(404);
  await pipeline().runSchedule('retention-sweep');
  await pipeline().runSchedule('view-time-pass');
}

describe('the deployed functions', () => {
  it('every function of the template runs from its bundle with a real event, and none fails', async () => {
    // Act: each path on its own account, side by side.
    await Promise.all([
      webhookDelivered(),
      emailsSent(),
      mailReceived(),
      organizationEnriched(),
      automationsApplied(),
      groupBackfilled(),
      slaKept(),
      ticketCleanedUp(),
      reindexed(),
      bulkJobCompleted(),
      readsAnswered(),
      roundFiveRan(),
    ]);
    const swept = await pipeline().sweep(0);
    expect(swept).toMatchObject({ published: expect.any(Number), unpublished: expect.any(Number) });

    // Assert: the template's functions, each counted by its running worker.
    const lambda = await localLambda();
    const functions = [...lambda.deployment.functions.values()].map((def) => ({ name: def.name, fn: lambda.fn(def.logicalId) }));
    const notInvoked = functions.filter((f) => f.fn.invocations === 0).map((f) => f.name);
    const failed = functions.filter((f) => f.fn.failures > 0).map((f) => `${f.name} (${f.fn.failures} of ${f.fn.invocations})`);
    expect(notInvoked, `functions never invoked: ${notInvoked.join(', ')}`).toEqual([]);
    expect(failed, `functions with failed invocations: ${failed.join(', ')}`).toEqual([]);
  }, 90_000);
});
