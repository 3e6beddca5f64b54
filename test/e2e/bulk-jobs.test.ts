import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '#shared/auth/principal.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, insertTicketRecord, outboxItems, storeTickets, ticketRecord, TICKETS, walk, type Desk, type Json } from '../support/desk.ts';
import { usePipeline } from '../support/pipeline.ts';
import { rateLimitHeaders } from '../support/users.ts';
import { eventually } from '../support/wait.ts';

/**
 * Bulk update and bulk delete as jobs (decisions §16), through the API on the
 * local emulators: the jobs function answers 202 and queues the job, the
 * bulk-jobs consumer (its bundle, fed by the file's queue) changes each ticket
 * as its own PUT or DELETE, GET /v1/jobs/{id} shows it. The accounts are not
 * the pipeline's, so their ticket events stay in the outbox to be read here.
 */
const { client } = useGateway();
const { pipeline } = usePipeline(['bulk-jobs']);

const BULK_UPDATE = `${TICKETS}/bulk_update`;
const BULK_DELETE = `${TICKETS}/bulk_delete`;
const JOBS = '/helpdesk/api/v1/jobs';
const AUDITS = '/helpdesk/api/v1/audits';
// Generous: the machine is shared, and a job of 100 tickets is 100 transactions.
const WAIT_MS = 60_000;

let acct: TestAccount;
let other: TestAccount;
let owner: Desk;
let agent: Desk;
let agentId: string;
let viewer: Desk;

beforeAll(async () => {
  [acct, other] = await Promise.all([createTestAccount(), createTestAccount()]);
  owner = as(client, acct.ownerKey);
  const member = await acct.addUser('member');
  agentId = member.id;
  agent = as(client, member.key);
  viewer = as(client, (await acct.addUser('viewer')).key);
});

const principalOf = (a: TestAccount, userId = a.ownerId): Principal => ({ accountId: a.accountId, userId, role: 'owner', plan: 'enterprise', credential: 'api_key' });

/** Tickets made straight through the ticket service (the arrange step; not API requests, so not counted against the rate limit). */
async function seedTickets(a: TestAccount, n: number, ticket: Record<string, unknown> = {}): Promise<Json[]> {
  const tickets = await import('#shared/tickets/service.ts');
  const { CreateTicketBodySchema } = await import('#shared/tickets/model.ts');
  const made: Json[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < n; i = next++) {
        made[i] = tickets.toTicketDto(await tickets.createTicket(principalOf(a), CreateTicketBodySchema.parse({ ticket: { subject: `Bulk ${i}`, ...ticket } }).ticket));
      }
    }),
  );
  return made;
}

/**
 * The job once completed, read through the API once the pipeline has handled everything (local/pipeline.ts drained):
 * polled for meanwhile, each poll was a request competing with the consumer doing the job.
 */
async function completed(d: Desk, jobId: string): Promise<Json> {
  await pipeline().drained();
  return eventually(
    async () => {
      const res = await d.get(`${JOBS}/${jobId}`);
      expect(res.status, res.text).toBe(200);
      return res.body.job.status === 'completed' ? res.body.job : null;
    },
    WAIT_MS,
    `job ${jobId} to complete`,
  );
}

const auditsOf = async (d: Desk, id: string): Promise<Json[]> => {
  const res = await d.get(`${TICKETS}/${id}/audits?page_size=100`);
  expect(res.status, res.text).toBe(200);
  return res.body.audits;
};

/** The ticket events recorded for an account, by ticket id. */
async function eventsByTicket(accountId: string): Promise<Map<string, Json[]>> {
  const out = new Map<string, Json[]>();
  for (const item of await outboxItems(accountId)) {
    const d = item.detail;
    if (!d?.event?.startsWith('ticket.')) continue;
    const id = d.data.ticket.id;
    out.set(id, [...(out.get(id) ?? []), d]);
  }
  return out;
}

const TICKET_CLOSED = { code: 'TICKET_CLOSED', message: 'A closed ticket cannot be changed' };
const NOT_FOUND = { code: 'NOT_FOUND', message: 'Ticket not found' };

describe('POST /v1/tickets/bulk_update', () => {
  it('changes 95 of 100 tickets, each as its own PUT (events, audit via bulk), and records why 3 closed and 2 of another account failed', async () => {
    // Arrange: 95 open tickets, 3 closed ones (only automations close tickets), 2 tickets of another account; the ids interleaved.
    const open = await seedTickets(acct, 95, { status: 'open', tags: ['billing'] });
    const closed = await Promise.all([1, 2, 3].map(() => insertTicketRecord(acct.accountId, { status: 'closed' })));
    const foreign = await seedTickets(other, 2);
    const ids = [...open.map((t) => t.id)];
    ids.splice(10, 0, closed[0].id);
    ids.splice(40, 0, foreign[0].id, closed[1].id);
    ids.splice(97, 0, closed[2].id, foreign[1].id);
    expect(ids).toHaveLength(100);
    const eventsBefore = await eventsByTicket(acct.accountId);

    // Act
    const res = await agent.post(BULK_UPDATE, { ids, ticket: { status: 'pending', priority: 'high', addTags: ['bulk'] } });
    const job = await completed(agent, res.body.job.id);

    // Assert: the 202, then the job with one result per id, in the order given.
    expect(res.status, res.text).toBe(202);
    expect(res.body.job).toMatchObject({ type: 'bulk_update', status: 'queued', total: 100, succeeded: 0, failed: 0, results: [], completedAt: null });
    expect(res.body.job.id).toMatch(/^job_/);
    const failedWith = new Map<string, object>([...closed.map((t) => [t.id, TICKET_CLOSED] as const), ...foreign.map((t) => [t.id, NOT_FOUND] as const)]);
    expect(job.results).toEqual(ids.map((id) => (failedWith.has(id) ? { id, status: 'error', error: failedWith.get(id) } : { id, status: 'ok' })));
    expect(job).toMatchObject({ total: 100, succeeded: 95, failed: 5 });
    expect(Date.parse(job.completedAt)).toBeGreaterThanOrEqual(Date.parse(job.createdAt));

    // Each of the 95 as a PUT by the agent would leave it: the fields, the tags it had plus the new one, one audit via bulk.
    // Read from the account's lists (its tickets, its audit log) in pages of 100, not in 190 requests of one ticket each.
    const events = await eventsByTicket(acct.accountId);
    const listed = new Map((await walk(owner, `${TICKETS}?page_size=100`, 'tickets')).items.map((t: Json) => [t.id, t]));
    const logged = new Map<string, Json[]>();
    for (const a of (await walk(owner, `${AUDITS}?resource_type=ticket&page_size=100`, 'audits')).items) logged.set(a.resource.id, [...(logged.get(a.resource.id) ?? []), a]);
    for (const t of open) {
      const [now, audits] = [listed.get(t.id), logged.get(t.id) ?? []];
      expect(now).toMatchObject({ status: 'pending', priority: 'high', tags: ['billing', 'bulk'] });
      expect(audits.map((a) => a.via)).toEqual(['api', 'bulk']);
      expect(audits[1]).toMatchObject({ actor: { type: 'user', id: agentId }, deleted: false });
      expect(audits[1].changes).toEqual(
        expect.arrayContaining([
          { field: 'status', from: 'open', to: 'pending' },
          { field: 'priority', from: 'normal', to: 'high' },
          { field: 'tags', from: ['billing'], to: ['billing', 'bulk'] },
        ]),
      );
      const fresh = (events.get(t.id) ?? []).slice((eventsBefore.get(t.id) ?? []).length);
      expect(fresh.map((e) => e.event)).toEqual(['ticket.updated']);
      expect(fresh[0]).toMatchObject({ actor: { type: 'user', id: agentId }, correlationId: res.headers.get('x-request-id') });
    }
    // The failures changed nothing.
    for (const t of closed) expect((await owner.get(`${TICKETS}/${t.id}`)).body.ticket).toMatchObject({ status: 'closed', priority: 'normal', tags: [] });
    for (const t of closed) expect(events.get(t.id)).toBeUndefined();
    const otherOwner = as(client, other.ownerKey);
    for (const t of foreign) expect((await otherOwner.get(`${TICKETS}/${t.id}`)).body.ticket).toEqual(t);
  }, 120_000);

  it("edits each ticket's own tags with addTags/removeTags, and replaces them with tags", async () => {
    const [a, b, c] = await Promise.all([seedTickets(acct, 1, { tags: ['spam', 'billing'] }), seedTickets(acct, 1, { tags: ['vip'] }), seedTickets(acct, 1)]).then((x) => x.flat());

    const edited = await completed(owner, (await owner.post(BULK_UPDATE, { ids: [a.id, b.id, c.id], ticket: { addTags: ['vip'], removeTags: ['spam'] } })).body.job.id);
    const tagsOf = async (id: string) => (await owner.get(`${TICKETS}/${id}`)).body.ticket.tags;
    const afterEdit = [await tagsOf(a.id), await tagsOf(b.id), await tagsOf(c.id)];
    const replaced = await completed(owner, (await owner.post(BULK_UPDATE, { ids: [a.id, c.id], ticket: { tags: ['one', 'two'] } })).body.job.id);

    expect(edited).toMatchObject({ succeeded: 3, failed: 0 });
    expect(afterEdit).toEqual([['billing', 'vip'], ['vip'], ['vip']]);
    // b already had vip and lost no spam: nothing changed, so no audit and no event (as a PUT of the same values).
    expect((await auditsOf(owner, b.id)).map((x) => x.via)).toEqual(['api']);
    expect(replaced).toMatchObject({ succeeded: 2, failed: 0 });
    expect([await tagsOf(a.id), await tagsOf(c.id)]).toEqual([
      ['one', 'two'],
      ['one', 'two'],
    ]);
  });

  it('counts a repeated id once: one result, one change, one audit', async () => {
    const [a, b] = await seedTickets(acct, 2);

    const res = await owner.post(BULK_UPDATE, { ids: [a.id, a.id, b.id, a.id], ticket: { priority: 'urgent' } });
    const job = await completed(owner, res.body.job.id);

    expect(res.body.job.total).toBe(2);
    expect(job.results).toEqual([
      { id: a.id, status: 'ok' },
      { id: b.id, status: 'ok' },
    ]);
    expect((await auditsOf(owner, a.id)).map((x) => x.via)).toEqual(['api', 'bulk']);
  });

  it('reports a change the PUT refuses for each ticket (an assignee who is no agent), as the PUT answers it', async () => {
    const [a] = await seedTickets(acct, 1);
    const viewerId = (await acct.addUser('viewer')).id;

    const job = await completed(owner, (await owner.post(BULK_UPDATE, { ids: [a.id], ticket: { assigneeId: viewerId } })).body.job.id);
    const put = await owner.put(`${TICKETS}/${a.id}`, { ticket: { assigneeId: viewerId } });

    expect(put.status).toBe(422);
    expect(job.results).toEqual([{ id: a.id, status: 'error', error: { code: put.body.error.code, message: put.body.error.message } }]);
  });
});

describe('POST /v1/tickets/bulk_delete', () => {
  it('deletes each ticket as a DELETE would (ticket.deleted, a delete audit via bulk), and an unknown id fails as not found', async () => {
    const doomed = await seedTickets(acct, 5);
    const ids = [...doomed.map((t) => t.id), doomed[0].id, 'tkt_NOSUCHTICKET'];

    const res = await agent.post(BULK_DELETE, { ids });
    const job = await completed(viewer, res.body.job.id);

    expect(res.status, res.text).toBe(202);
    expect(job).toMatchObject({ type: 'bulk_delete', total: 6, succeeded: 5, failed: 1 });
    expect(job.results).toEqual([...doomed.map((t) => ({ id: t.id, status: 'ok' })), { id: 'tkt_NOSUCHTICKET', status: 'error', error: NOT_FOUND }]);
    const events = await eventsByTicket(acct.accountId);
    for (const t of doomed) {
      expect((await owner.get(`${TICKETS}/${t.id}`)).status).toBe(404);
      const audits = await auditsOf(owner, t.id);
      expect(audits.at(-1)).toMatchObject({ via: 'bulk', deleted: true, changes: [], actor: { type: 'user', id: agentId } });
      expect(events.get(t.id)?.filter((e) => e.event === 'ticket.deleted')).toHaveLength(1);
    }
  });
});

describe('GET /v1/jobs/{id}', () => {
  it("answers the caller's account only: another account's job and an unknown id are 404", async () => {
    const [a] = await seedTickets(acct, 1);
    const res = await owner.post(BULK_UPDATE, { ids: [a.id], ticket: { type: 'task' } });
    await completed(owner, res.body.job.id);

    const fromOther = await as(client, other.ownerKey).get(`${JOBS}/${res.body.job.id}`);
    const unknown = await owner.get(`${JOBS}/job_NOSUCHJOB`);

    expect(fromOther.status).toBe(404);
    expect(fromOther.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Job not found' } });
    expect(unknown.status).toBe(404);
  });

  it('lets a viewer read a job but not start one', async () => {
    const [a] = await seedTickets(acct, 1);

    const refused = await viewer.post(BULK_UPDATE, { ids: [a.id], ticket: { priority: 'low' } });
    const deleteRefused = await viewer.post(BULK_DELETE, { ids: [a.id] });

    expect(refused.status).toBe(403);
    expect(deleteRefused.status).toBe(403);
    expect(refused.body.error.code).toBe('FORBIDDEN');
  });
});

describe('bulk request validation (decisions §3)', () => {
  it.each([
    ['malformed JSON', BULK_UPDATE, '{"ids":', 400, undefined],
    ['a body that is no object', BULK_DELETE, '[1]', 400, undefined],
    ['no ticket wrapper', BULK_UPDATE, JSON.stringify({ ids: ['tkt_1'] }), 400, 'ticket'],
    ['no field to change', BULK_UPDATE, JSON.stringify({ ids: ['tkt_1'], ticket: {} }), 422, 'ticket'],
    ['no ids', BULK_UPDATE, JSON.stringify({ ids: [], ticket: { status: 'open' } }), 422, 'ids'],
    ['101 ids', BULK_DELETE, JSON.stringify({ ids: Array.from({ length: 101 }, (_, i) => `tkt_${i}`) }), 422, 'ids'],
    ['ids missing', BULK_DELETE, JSON.stringify({}), 422, 'ids'],
    ['a status the PUT refuses', BULK_UPDATE, JSON.stringify({ ids: ['tkt_1'], ticket: { status: 'done' } }), 422, 'status'],
    ['tags with addTags', BULK_UPDATE, JSON.stringify({ ids: ['tkt_1'], ticket: { tags: ['a'], addTags: ['b'] } }), 422, 'tags'],
    ['a tag added and removed', BULK_UPDATE, JSON.stringify({ ids: ['tkt_1'], ticket: { addTags: ['a'], removeTags: ['a'] } }), 422, 'removeTags'],
  ])('%s: %s', async (_name, path, rawBody, status, field) => {
    const res = await owner.raw('POST', path, rawBody);

    expect(res.status, res.text).toBe(status);
    expect(res.body.error.code).toBe(status === 400 ? 'BAD_REQUEST' : 'VALIDATION_ERROR');
    if (field) expect(res.body.error.details.map((d: Json) => d.field)).toContain(field);
  });

  it('takes an Idempotency-Key: a repeat answers the same job again and starts none; another body under the key is a 422', async () => {
    const [a] = await seedTickets(acct, 1);
    const key = `bulk-${a.id}`;
    const send = (body: unknown) => client.request('POST', BULK_UPDATE, { token: acct.ownerKey, body, headers: { 'Idempotency-Key': key } });

    const first = await send({ ids: [a.id], ticket: { priority: 'low' } });
    const again = await send({ ids: [a.id], ticket: { priority: 'low' } });
    const different = await send({ ids: [a.id], ticket: { priority: 'high' } });
    await completed(owner, first.body.job.id);

    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body.job.id).toBe(first.body.job.id);
    expect(different.status).toBe(422);
    expect((await auditsOf(owner, a.id)).map((x) => x.via)).toEqual(['api', 'bulk']);
  });
});

describe('a job cut short', () => {
  it('resumes after its consumer dies mid-chunk without changing any ticket twice: version +1 and one audit each', async () => {
    const jobs = await import('#shared/jobs/service.ts');
    const { JOB_EXECUTORS: executors } = await import('#functions/bulk-jobs/executors.ts');
    const ticketsRepo = await import('#shared/tickets/repository.ts');
    const versionOf = async (id: string) => (await ticketsRepo.getTicket(acct.accountId, id))!.version;
    const tickets = await seedTickets(acct, 30, { priority: 'low' });
    const job = await jobs.newJob(principalOf(acct, agentId), { type: 'bulk_update', ids: tickets.map((t) => t.id), input: { priority: 'high', addTags: ['resumed'] } });
    const msg = { accountId: acct.accountId, jobId: job.id };
    const queued: unknown[] = [];
    const next = async (m: unknown) => void queued.push(m);

    // Act: the first step dies once 10 of its tickets are changed (the others under way finish), before it records anything.
    let done = 0;
    const crash = jobs.runJobStep(msg, {
      executors,
      next,
      afterItem: () => {
        if (++done === 10) throw new Error('the consumer died');
      },
    });
    await expect(crash).rejects.toThrow('the consumer died');
    const cutShort = await jobs.getJob(acct, job.id);
    // Meanwhile a PUT moves one ticket the dead step changed and one it did not reach: re-applying the job's change
    // would now change the first again (only its version and audits tell that the job already did it).
    const versions = await Promise.all(tickets.slice(0, 25).map((t) => versionOf(t.id)));
    const changedEarly = tickets[versions.indexOf(2)];
    const notReached = tickets[versions.indexOf(1)];
    for (const t of [changedEarly, notReached]) expect((await owner.put(`${TICKETS}/${t.id}`, { ticket: { priority: 'normal' } })).status).toBe(200);
    // Then the message comes back: the step resumes its chunk, and the next step finishes the job.
    const resumed = await jobs.runJobStep(msg, { executors, next });
    const last = await jobs.runJobStep(msg, { executors, next });
    const after = await jobs.runJobStep(msg, { executors, next });

    // Assert
    expect(versions.filter((v) => v === 2).length).toBeGreaterThanOrEqual(10);
    expect(cutShort).toMatchObject({ status: 'running', succeeded: 0, results: [] });
    expect(resumed).toEqual({ state: 'progressed', tickets: 25, remaining: 5 });
    expect(last).toEqual({ state: 'completed', tickets: 5, remaining: 0 });
    expect(after).toEqual({ state: 'finished' });
    expect(queued).toEqual([msg]);
    expect(await jobs.getJob(acct, job.id)).toMatchObject({ status: 'completed', succeeded: 30, failed: 0 });
    for (const t of tickets) {
      const record = await ticketsRepo.getTicket(acct.accountId, t.id);
      const vias = (await auditsOf(owner, t.id)).map((a) => a.via);
      if (t === changedEarly) {
        expect(record).toMatchObject({ version: 3, priority: 'normal', tags: ['resumed'] });
        expect(vias).toEqual(['api', 'bulk', 'api']);
      } else if (t === notReached) {
        expect(record).toMatchObject({ version: 3, priority: 'high', tags: ['resumed'] });
        expect(vias).toEqual(['api', 'api', 'bulk']);
      } else {
        expect(record, t.id).toMatchObject({ version: 2, priority: 'high', tags: ['resumed'] });
        expect(vias).toEqual(['api', 'bulk']);
      }
    }
  }, 60_000);

  it('runs a step once when its message is delivered twice at the same time: the other finds the job held (or already done)', async () => {
    const jobs = await import('#shared/jobs/service.ts');
    const { JOB_EXECUTORS: executors } = await import('#functions/bulk-jobs/executors.ts');
    const tickets = await seedTickets(acct, 3);
    const job = await jobs.newJob(principalOf(acct), { type: 'bulk_update', ids: tickets.map((t) => t.id), input: { status: 'open' } });
    const msg = { accountId: acct.accountId, jobId: job.id };

    const outcomes = await Promise.all([jobs.runJobStep(msg, { executors, next: async () => undefined }), jobs.runJobStep(msg, { executors, next: async () => undefined })]);

    const states = outcomes.map((o) => o.state);
    expect(states.filter((s) => s === 'completed')).toHaveLength(1);
    expect(states.filter((s) => s !== 'completed')[0]).toMatch(/^(busy|finished)$/);
    for (const t of tickets) expect((await auditsOf(owner, t.id)).map((a) => a.via)).toEqual(['api', 'bulk']);
  });
});

describe('the rate limit', () => {
  it('counts a bulk job of 100 tickets as one request', async () => {
    // A free account (100 requests a minute): 100 single PUTs would use its whole minute.
    const small = await createTestAccount('free');
    const d = as(client, small.ownerKey);
    // Stored as the repository writes them: what is counted is the bulk request, not how its tickets were made.
    const records = await Promise.all(Array.from({ length: 100 }, (_, i) => ticketRecord(small.accountId, new Date(), { subject: `Bulk ${i}` })));
    await storeTickets(records);
    const ids = records.map((t) => t.id);
    const jobs = await import('#shared/jobs/service.ts');

    // Act: a request before, the bulk job, a request after, in one window of the limit (a calendar minute). The clock
    // is read, not waited for: a try that straddles two windows is made again at once, early in the window it ended in.
    const attempt = async (priority: string) => {
      const before = await d.get(`${TICKETS}?page_size=1`);
      const res = await d.post(BULK_UPDATE, { ids, ticket: { priority } });
      await pipeline().drained();
      // Read through the service, not the API: a request would count.
      const job = await eventually(
        async () => {
          const now = await jobs.getJob(small, res.body.job.id);
          return now.status === 'completed' ? now : null;
        },
        WAIT_MS,
        'the job',
      );
      const afterwards = await d.get(`${TICKETS}?page_size=1`);
      return { job, headers: [before, res, afterwards].map(rateLimitHeaders) };
    };
    let tried = await attempt('urgent');
    for (const priority of ['high', 'low']) {
      if (tried.headers[0].reset === tried.headers[2].reset) break;
      tried = await attempt(priority);
    }

    // Assert
    expect(tried.job?.succeeded).toBe(100);
    const [a, b, c] = tried.headers;
    expect(a.limit).toBe(100);
    expect([a.reset, b.reset]).toEqual([c.reset, c.reset]);
    expect([b.remaining, c.remaining]).toEqual([a.remaining - 1, a.remaining - 2]);
  }, 120_000);
});
