import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '#shared/auth/principal.ts';
import { functionByEntry } from '../../local/lambda/deployment.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, closeTicketDirectly, MESSAGES, must, newTicket, outboxEvents, TICKETS, type Api, type Json } from '../support/helpdesk.ts';
import { localLambda } from '../support/lambda.ts';
import { usePipeline } from '../support/pipeline.ts';
import { useSmtp } from '../support/smtp.ts';
import { eventually } from '../support/wait.ts';

/**
 * Ticket merge (decisions §20) through the API on the local emulators: the
 * jobs function answers 202 and queues the job, the bulk-jobs consumer (its
 * bundle) moves each source's messages and closes it, GET /v1/jobs/{id}
 * follows it. Mail goes over SMTP to the local receipt rule, as a customer's
 * would. The accounts are not the pipeline's, so their events stay in the
 * outbox to be read here.
 */
const { client } = useGateway();
usePipeline(['bulk-jobs']);
const smtp = useSmtp();

const JOBS = '/helpdesk/api/v1/jobs';
const WAIT_MS = 60_000;

let acct: TestAccount;
let owner: Api;
let agent: Api;
let agentId: string;
/** The owner's session: messages take session tokens only. */
let session: Api;

beforeAll(async () => {
  acct = await createTestAccount();
  owner = as(client, acct.ownerKey);
  const member = await acct.addUser('member');
  agentId = member.id;
  agent = as(client, member.key);
  session = as(client, await acct.session(acct.ownerId));
});

const mergePath = (targetId: string) => `${TICKETS}/${targetId}/merge`;

/** The job once completed, polled through the API. */
const completed = (jobId: string): Promise<Json> =>
  eventually(
    async () => {
      const job = must(await owner.get(`${JOBS}/${jobId}`), 200, 'get job').job;
      return job.status === 'completed' ? job : null;
    },
    WAIT_MS,
    `job ${jobId} to complete`,
  );

const messagesOf = async (ticketId: string): Promise<{ list: Json[]; total: number }> => {
  const body = must(await session.get(`${MESSAGES}?ticket_id=${ticketId}&limit=100`), 200, 'list messages');
  return { list: body.data, total: body.meta.total };
};
const ticketOf = async (id: string): Promise<Json> => must(await owner.get(`${TICKETS}/${id}`), 200, 'get ticket').ticket;
const auditsOf = async (id: string): Promise<Json[]> => must(await owner.get(`${TICKETS}/${id}/audits?page_size=100`), 200, 'audits').audits;
const note = async (ticketId: string, content: string) => must(await session.post(MESSAGES, { ticket_id: ticketId, type: 'note', content }), 201, 'add note').data;

let seq = 0;
const mailId = () => `<m${Date.now()}.${seq++}@customer.example>`;
const inbound = () => `${acct.accountId.toLowerCase()}@${smtp.domain()}`;
/** Send a mail to the account's inbound address; the function has run when the server answered 250. */
const send = (mail: Record<string, unknown>) => smtp.transport().sendMail({ to: inbound(), ...mail });
const ticketWithSubject = async (subject: string): Promise<Json> => must(await owner.get(`${TICKETS}?page_size=100`), 200, 'list tickets').tickets.find((t: Json) => t.subject === subject);

describe('POST /v1/tickets/{id}/merge', () => {
  const bytes = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 13) % 256));
  let target: Json;
  let byMail: Json;
  let firstMailId: string;

  it("moves two sources' messages (with their attachments) to the target and closes them, in one job", async () => {
    // Arrange: the target (its own note), a source made by mail with an attachment (plus an agent's note), a source by API with two notes.
    target = await newTicket(owner, { subject: 'Merge target', requesterEmail: 'tara@customer.example', tags: ['billing'] });
    await note(target.id, 'Target first note');
    firstMailId = mailId();
    await send({
      from: '"Dana Buyer" <dana@customer.example>',
      subject: 'Merge by mail',
      text: 'Invoice attached',
      messageId: firstMailId,
      attachments: [{ filename: 'invoice.bin', content: bytes }],
    });
    byMail = await ticketWithSubject('Merge by mail');
    await must(await owner.put(`${TICKETS}/${byMail.id}`, { ticket: { tags: ['vip', 'billing'] } }), 200, 'tag');
    await note(byMail.id, 'Dana called too');
    const byApi = await newTicket(owner, { subject: 'Merge by API', requesterEmail: 'tara@customer.example', tags: ['printer'] });
    await note(byApi.id, 'API one');
    await note(byApi.id, 'API two');
    const before = new Map<string, Json>();
    for (const id of [target.id, byMail.id, byApi.id]) for (const m of (await messagesOf(id)).list) before.set(m.id, m);
    const sourceIds = [byMail.id, byApi.id];
    const eventsBefore = (await outboxEvents(acct.accountId)).length;

    // Act
    const res = await agent.post(mergePath(target.id), { ids: [...sourceIds, byMail.id] });
    const job = await completed(res.body.job.id);

    // Assert: the job, one result per distinct source.
    expect(res.status, res.text).toBe(202);
    expect(res.body.job).toMatchObject({ type: 'merge', status: 'queued', total: 2, results: [] });
    expect(job).toMatchObject({ type: 'merge', succeeded: 2, failed: 0, results: sourceIds.map((id) => ({ id, status: 'ok' })) });
    // The target holds every message once, in time order, with its ids and createdAt, then a note per source.
    const onTarget = await messagesOf(target.id);
    const moved = onTarget.list.slice(0, before.size);
    expect(moved.map((m) => m.id)).toEqual([...before.keys()].sort());
    for (const m of moved) expect(m).toMatchObject({ ticketId: target.id, createdAt: before.get(m.id).createdAt, content: before.get(m.id).content });
    const notes = onTarget.list.slice(before.size);
    expect(notes.map((m) => [m.type, m.textContent, m.authorId])).toEqual([
      ['note', `Merged ${byMail.id} into this ticket (requester: Dana Buyer <dana@customer.example>)`, agentId],
      ['note', `Merged ${byApi.id} into this ticket`, agentId],
    ]);
    expect(onTarget.total).toBe(before.size + 2);
    // A moved message answers its new ticket; its attachment went along and downloads byte for byte from under the target.
    const mailed = moved.find((m) => m.attachments.length)!;
    expect(must(await session.get(`${MESSAGES}/${mailed.id}`), 200, 'get message').data.ticketId).toBe(target.id);
    expect(mailed.attachments[0].url).toContain(`/attachments/${acct.accountId}/${target.id}/`);
    expect(Buffer.from(await (await fetch(mailed.attachments[0].url)).arrayBuffer()).equals(bytes)).toBe(true);
    expect(must(await session.get(`/helpdesk/api/attachments/${mailed.attachments[0].id}`), 200, 'get attachment').data.size).toBe(bytes.length);
    // Each source: closed, merged into the target, a single note left.
    for (const id of sourceIds) {
      expect(await ticketOf(id)).toMatchObject({ status: 'closed', mergedInto: target.id });
      const left = await messagesOf(id);
      expect(left.list.map((m) => [m.type, m.textContent])).toEqual([['note', `Merged into ${target.id}`]]);
      expect(left.total).toBe(1);
      expect((await auditsOf(id)).at(-1)).toMatchObject({
        via: 'merge',
        actor: { type: 'user', id: agentId },
        changes: [
          { field: 'status', from: 'new', to: 'closed' },
          { field: 'mergedInto', from: null, to: target.id },
        ],
      });
    }
    // The target: the union of the tags, its other fields as they were, an audit per source.
    expect(await ticketOf(target.id)).toMatchObject({ status: 'new', tags: ['billing', 'vip', 'printer'], mergedInto: null, requesterEmail: 'tara@customer.example' });
    expect((await auditsOf(target.id)).filter((a) => a.via === 'merge').map((a) => a.changes)).toEqual([
      [
        { field: 'tags', from: ['billing'], to: ['billing', 'vip'] },
        { field: 'mergedFrom', from: null, to: byMail.id },
      ],
      [
        { field: 'tags', from: ['billing', 'vip'], to: ['billing', 'vip', 'printer'] },
        { field: 'mergedFrom', from: null, to: byApi.id },
      ],
    ]);
    // Events: ticket.updated for both and ticket.merged, per source.
    const fresh = (await outboxEvents(acct.accountId)).slice(eventsBefore).filter((e) => e.event.startsWith('ticket.'));
    expect(fresh.filter((e) => e.event === 'ticket.merged').map((e) => e.data)).toEqual(sourceIds.map((sourceId) => ({ ticket: { id: target.id, sourceId } })));
    for (const id of [...sourceIds, target.id]) expect(fresh.some((e) => e.event === 'ticket.updated' && e.data.ticket.id === id)).toBe(true);
    // Search finds the target by a source's tag; a status filter sees the sources closed.
    expect(must(await owner.get(`${TICKETS}?search=printer`), 200, 'search').tickets.map((t: Json) => t.id)).toContain(target.id);
    expect(must(await owner.get(`${TICKETS}?status=closed&page_size=100`), 200, 'closed').tickets.map((t: Json) => t.id)).toEqual(expect.arrayContaining(sourceIds));
  }, 120_000);

  it("lands a mail reply to a merged source's thread on the target", async () => {
    const ticketsBefore = must(await owner.get(`${TICKETS}?page_size=100`), 200, 'list').tickets.length;
    const onTarget = (await messagesOf(target.id)).total;

    await send({ from: 'dana@customer.example', subject: 'Re: Merge by mail', text: 'Any news?', inReplyTo: firstMailId, messageId: mailId() });

    const after = await messagesOf(target.id);
    expect(after.total).toBe(onTarget + 1);
    expect(after.list.at(-1)).toMatchObject({ type: 'request', channel: 'email', textContent: 'Any news?' });
    expect((await messagesOf(byMail.id)).total).toBe(1);
    expect(must(await owner.get(`${TICKETS}?page_size=100`), 200, 'list').tickets).toHaveLength(ticketsBefore);
  });
});

const principalOf = (userId: string): Principal => ({ accountId: acct.accountId, userId, role: 'member', plan: 'enterprise', credential: 'api_key' });

describe('a merge cut short', () => {
  it('resumes after its consumer dies between two moves: no message lost or on both tickets, then the close', async () => {
    // The steps run in this process, with the consumer's settings (its bucket: attachments move with their messages).
    const lambda = await localLambda();
    const env = lambda.environment(functionByEntry(lambda.deployment, 'functions/bulk-jobs/handler.ts').logicalId);
    for (const name of ['UPLOADS_BUCKET', 'AWS_ENDPOINT_URL_S3']) process.env[name] ??= env[name];
    const jobs = await import('#shared/jobs/service.ts');
    const { mergeExecutor } = await import('#shared/merge/executor.ts');
    const { MOVE_BATCH } = await import('#shared/merge/rules.ts');
    const { JOB_EXECUTORS } = await import('#functions/bulk-jobs/executors.ts');
    const target = await newTicket(owner, { subject: 'Resume target' });
    const source = await newTicket(owner, { subject: 'Resume source' });
    const messages = await import('#shared/messages/service.ts');
    const ids: string[] = [];
    for (let i = 0; i < MOVE_BATCH + 5; i++)
      ids.push((await messages.createMessage(principalOf(acct.ownerId), { ticket_id: source.id, type: 'note', content: `n${i}`, send_email: false, is_forward: false })).id);
    const job = await jobs.newJob(principalOf(agentId), { type: 'merge', ids: [source.id], input: { targetId: target.id, targetComment: null, sourceComment: null } });
    const msg = { accountId: acct.accountId, jobId: job.id };
    const next = async () => undefined;

    // Act: the first step dies right after its first move transaction, before the close (a store outage is an error the
    // runner never takes as the source's result: the step ends there, as a crash would end it).
    const { ServiceUnavailableError } = await import('#shared/domain/errors.ts');
    const dying = mergeExecutor({
      afterMove: () => {
        throw new ServiceUnavailableError('the consumer died');
      },
    });
    await expect(jobs.runJobStep(msg, { executors: { ...JOB_EXECUTORS, merge: dying }, next })).rejects.toThrow('the consumer died');
    const [cutTarget, cutSource, cutJob, cutTicket] = [await messagesOf(target.id), await messagesOf(source.id), await jobs.getJob(acct, job.id), await ticketOf(source.id)];
    const resumed = await jobs.runJobStep(msg, { executors: JOB_EXECUTORS, next });

    // Assert: cut short, each message on exactly one ticket, counts included; resumed, all on the target and the source closed.
    expect(cutJob).toMatchObject({ status: 'running', results: [] });
    expect(cutTarget.list.map((m) => m.id)).toEqual(ids.slice(0, MOVE_BATCH));
    expect(cutSource.list.map((m) => m.id)).toEqual(ids.slice(MOVE_BATCH));
    expect([cutTarget.total, cutSource.total]).toEqual([MOVE_BATCH, 5]);
    expect(cutTicket).toMatchObject({ status: 'new', mergedInto: null });
    expect(resumed).toEqual({ state: 'completed', tickets: 1, remaining: 0 });
    expect(await jobs.getJob(acct, job.id)).toMatchObject({ status: 'completed', succeeded: 1, results: [{ id: source.id, status: 'ok' }] });
    const onTarget = await messagesOf(target.id);
    expect(onTarget.list.map((m) => m.id)).toEqual([...ids, onTarget.list.at(-1).id]);
    expect(onTarget.total).toBe(ids.length + 1);
    expect((await messagesOf(source.id)).list.map((m) => m.type)).toEqual(['note']);
    expect(await ticketOf(source.id)).toMatchObject({ status: 'closed', mergedInto: target.id });
    expect((await auditsOf(source.id)).filter((a) => a.via === 'merge')).toHaveLength(1);
  }, 60_000);
});

describe('merge refusals (decisions §20)', () => {
  it('refuses at once a closed target, the target among the sources, 26 ids, an unknown target and a viewer', async () => {
    const [open, closed] = [await newTicket(owner), await newTicket(owner)];
    await closeTicketDirectly(acct.accountId, closed.id);
    const viewer = as(client, (await acct.addUser('viewer')).key);
    const error = (res: Json) => [res.status, res.body.error.code, res.body.error.details?.map((d: Json) => d.field)];

    const answers = {
      closedTarget: await agent.post(mergePath(closed.id), { ids: [open.id] }),
      targetAmongSources: await agent.post(mergePath(open.id), { ids: [closed.id, open.id] }),
      tooMany: await agent.post(mergePath(open.id), { ids: Array.from({ length: 26 }, (_, i) => `tkt_${i}`) }),
      unknownTarget: await agent.post(mergePath('tkt_NOSUCHTICKET'), { ids: [open.id] }),
      viewer: await viewer.post(mergePath(open.id), { ids: [closed.id] }),
    };

    expect(error(answers.closedTarget)).toEqual([422, 'TICKET_CLOSED', undefined]);
    expect(error(answers.targetAmongSources)).toEqual([422, 'VALIDATION_ERROR', ['ids']]);
    expect(error(answers.tooMany)).toEqual([422, 'VALIDATION_ERROR', ['ids']]);
    expect(error(answers.unknownTarget)).toEqual([404, 'NOT_FOUND', undefined]);
    expect(error(answers.viewer)).toEqual([403, 'FORBIDDEN', undefined]);
    expect(await ticketOf(open.id)).toMatchObject({ status: 'new', mergedInto: null });
  });

  it("fails per source another account's ticket, a missing one (NOT_FOUND), a closed one and a merged one (TICKET_CLOSED), and merges the rest", async () => {
    const other = await createTestAccount();
    const foreign = await newTicket(as(client, other.ownerKey));
    const [target, closed, fine, merged, into] = [await newTicket(owner), await newTicket(owner), await newTicket(owner), await newTicket(owner), await newTicket(owner)];
    await closeTicketDirectly(acct.accountId, closed.id);
    await completed((await agent.post(mergePath(into.id), { ids: [merged.id] })).body.job.id);
    const ids = [foreign.id, 'tkt_NOSUCHTICKET', closed.id, merged.id, fine.id];

    const job = await completed((await agent.post(mergePath(target.id), { ids })).body.job.id);

    const NOT_FOUND = { code: 'NOT_FOUND', message: 'Ticket not found' };
    const CLOSED = { code: 'TICKET_CLOSED', message: 'A closed or merged ticket cannot be merged' };
    expect(job).toMatchObject({ total: 5, succeeded: 1, failed: 4 });
    expect(job.results).toEqual([
      { id: foreign.id, status: 'error', error: NOT_FOUND },
      { id: 'tkt_NOSUCHTICKET', status: 'error', error: NOT_FOUND },
      { id: closed.id, status: 'error', error: CLOSED },
      { id: merged.id, status: 'error', error: CLOSED },
      { id: fine.id, status: 'ok' },
    ]);
    expect(must(await as(client, other.ownerKey).get(`${TICKETS}/${foreign.id}`), 200, 'foreign').ticket).toMatchObject({ status: 'new', mergedInto: null });
    expect(await ticketOf(merged.id)).toMatchObject({ mergedInto: into.id });
  }, 60_000);

  it('takes an Idempotency-Key: a repeat answers the same job and starts none', async () => {
    const [target, source] = [await newTicket(owner), await newTicket(owner)];
    const send = () => client.request('POST', mergePath(target.id), { token: acct.ownerKey, body: { ids: [source.id] }, headers: { 'Idempotency-Key': `merge-${source.id}` } });

    const first = await send();
    const again = await send();
    await completed(first.body.job.id);

    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body.job.id).toBe(first.body.job.id);
    expect((await auditsOf(target.id)).filter((a) => a.via === 'merge')).toHaveLength(1);
  });
});
