import { beforeAll, describe, expect, it } from 'vitest';
import { useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, TICKETS, type Desk, type Json } from '../support/desk.ts';
import { expectValidation } from '../support/helpdesk.ts';
import { usePipeline } from '../support/pipeline.ts';
import { storeViews } from '../support/store.ts';
import { eventually } from '../support/wait.ts';

/**
 * Views and their live counts (decisions §21), through the API on the local
 * emulators with the count consumers running: counts stay exact, and say
 * fresh, through creates, changes that leave and enter a view, deletes, a
 * bulk job, a merge and an erasure (and never fresh while a change is held unapplied);
 * a view's tickets come in its sort, in cursor pages; a personal view is its
 * creator's alone.
 */
const { client } = useGateway();
const { account, pipeline } = usePipeline(['view-counts', 'view-recount', 'bulk-jobs']);

const VIEWS = '/helpdesk/api/v1/views';
const WAIT_MS = 30_000;

let acct: TestAccount;
let owner: Desk;
let agent: Desk;
let agentId: string;
let other: Desk;

beforeAll(async () => {
  acct = await account();
  owner = as(client, acct.ownerKey);
  const member = await acct.addUser('member');
  agentId = member.id;
  agent = as(client, member.key);
  other = as(client, (await acct.addUser('member')).key);
});

const newView = async (d: Desk, view: Json): Promise<Json> => {
  const res = await d.post(VIEWS, { view });
  if (res.status !== 201) throw new Error(`create view: ${res.status} ${res.text}`);
  return res.body.view;
};
const countOf = async (d: Desk, id: string) => {
  const res = await d.get(`${VIEWS}/${id}/count`);
  if (res.status !== 200) throw new Error(`count: ${res.status} ${res.text}`);
  return res.body.count as { viewId: string; value: number; fresh: boolean };
};
/**
 * The count once fresh (the consumers have applied every change); the answer is polled for, not the value (0 is one too).
 * Read once the pipeline has handled everything (local/pipeline.ts drained), not polled for while it works: each poll
 * is a request that competes with the consumers.
 */
const freshCount = async (d: Desk, id: string, waitMs = WAIT_MS): Promise<number> => {
  await pipeline().drained();
  const fresh = await eventually(
    async () => {
      const c = await countOf(d, id);
      return c.fresh ? c : undefined;
    },
    waitMs,
    `fresh count of ${id}`,
  );
  return fresh!.value;
};
/** A job once completed (asked once the pipeline has handled everything, as freshCount). */
const jobDone = async (id: string) => {
  await pipeline().drained();
  return eventually(
    async () => {
      const j = (await owner.get(`/helpdesk/api/v1/jobs/${id}`)).body.job;
      return j.status === 'completed' ? j : undefined;
    },
    WAIT_MS,
    `job ${id}`,
  );
};
/**
 * A ticket change made while the outbox publisher is held, so its event cannot
 * have been applied: the count must say not fresh. Then the event goes out;
 * answers the fresh count after it.
 */
const heldChange = async (viewId: string, change: () => Promise<{ status: number }>) => {
  await freshCount(owner, viewId);
  await pipeline().stopPublisher();
  try {
    expect((await change()).status).toBeLessThan(300);
    expect(await countOf(owner, viewId), 'fresh with a change unapplied').toMatchObject({ fresh: false });
    await pipeline().sweep(0);
  } finally {
    await pipeline().startPublisher();
  }
  return freshCount(owner, viewId);
};
const allTickets = async (d: Desk, id: string, pageSize = 2): Promise<Json[]> => {
  const out: Json[] = [];
  let path: string | null = `${VIEWS}/${id}/tickets?page_size=${pageSize}`;
  while (path) {
    const res = await d.get(path);
    expect(res.status).toBe(200);
    out.push(...res.body.tickets);
    path = res.body.links.next;
  }
  return out;
};

describe('macros', () => {
  it('a macro with every kind of action: previewed (nothing saved), then applied as one message, audited via macro', async () => {
    // Arrange: a group, a dropdown field, an assignee, a ticket with a requester
    const group = (await owner.post('/helpdesk/api/groups', { name: `Tier 2 ${Date.now()}` })).body.data;
    const field = (
      await owner.post(`${TICKETS.replace('/tickets', '/ticket_fields')}`, {
        ticketField: { title: 'Plan', type: 'dropdown', fieldKey: `plan_${Date.now()}`, options: [{ name: 'Gold', value: 'gold' }] },
      })
    ).body.ticketField;
    const ticket = await newTicket(owner, { requesterEmail: 'ann@example.com', requesterName: 'Ann <Lee>', tags: ['old', 'keep'] });
    const actions = [
      { field: 'status', value: 'pending' },
      { field: 'priority', value: 'high' },
      { field: 'type', value: 'incident' },
      { field: 'assigneeId', value: agentId },
      { field: 'groupId', value: group.id },
      { field: 'tags', value: ['keep', 'old'] },
      { field: 'addTags', value: ['macro'] },
      { field: 'removeTags', value: ['old'] },
      { field: `customFields.${field.fieldKey}`, value: 'gold' },
      { field: 'comment', value: { type: 'response', content: '<p>Hi {{requester.firstName}} ({{requester.name}}), {{ticket.status}} now. {{agent.unknown}}</p>' } },
    ];
    const macro = (await owner.post('/helpdesk/api/v1/macros', { macro: { title: 'Escalate', actions } })).body.macro;
    const APPLY = `${TICKETS}/${ticket.id}/macros/${macro.id}/apply`;
    const expected = { status: 'pending', priority: 'high', type: 'incident', assigneeId: agentId, groupId: group.id, tags: ['keep', 'macro'], customFields: [{ id: field.id, value: 'gold' }] };
    // Act: preview
    const preview = await agent.get(APPLY);
    // Assert: the would-be ticket and comment, and nothing saved
    expect(preview.status).toBe(200);
    expect(preview.body.result.ticket).toMatchObject(expected);
    expect(preview.body.result.comment).toEqual({ type: 'response', content: '<p>Hi Ann (Ann &lt;Lee&gt;), pending now. {{agent.unknown}}</p>' });
    expect((await owner.get(`${TICKETS}/${ticket.id}`)).body.ticket).toMatchObject({ status: 'new', tags: ['old', 'keep'] });
    expect((await owner.get(`${TICKETS}/${ticket.id}/audits`)).body.audits).toHaveLength(1);
    // Act: apply
    const applied = await agent.post(APPLY, {});
    // Assert: the change and one message, one audit via macro naming it, and the response queued for email
    expect(applied.status, applied.text).toBe(200);
    expect(applied.body.ticket).toMatchObject(expected);
    expect(applied.body.message).toMatchObject({ type: 'response', ticketId: ticket.id, emailDelivery: { status: 'queued', to: ['ann@example.com'] } });
    expect(applied.body.message.content).toContain('Hi Ann (Ann &lt;Lee&gt;), pending now.');
    const audits = (await owner.get(`${TICKETS}/${ticket.id}/audits?sort_order=desc&page_size=1`)).body.audits;
    expect(audits[0]).toMatchObject({ via: 'macro', actor: { type: 'macro', id: macro.id }, messageId: applied.body.message.id });
    expect(audits[0].changes.map((c: Json) => c.field).sort()).toEqual(['assigneeId', 'customFields.' + field.fieldKey, 'groupId', 'priority', 'status', 'tags', 'type'].sort());
  });

  it('checks actions as a ticket update would, and keeps personal macros to their creator', async () => {
    // Act
    const bad = await owner.post('/helpdesk/api/v1/macros', {
      macro: {
        title: 'Bad',
        actions: [
          { field: 'priority', value: 'high' },
          { field: 'assigneeId', value: 'usr_nobody' },
        ],
      },
    });
    const mine = (await agent.post('/helpdesk/api/v1/macros', { macro: { title: 'Mine', actions: [{ field: 'addTags', value: ['x'] }], personal: true } })).body.macro;
    // Assert
    expectValidation(bad, 'actions.1.value');
    expect((await other.get(`/helpdesk/api/v1/macros/${mine.id}`)).status).toBe(404);
    expect((await other.get(`${TICKETS}/${(await newTicket(owner)).id}/macros/${mine.id}/apply`)).status).toBe(404);
    expect((await agent.post('/helpdesk/api/v1/macros', { macro: { title: 'Shared', actions: [{ field: 'addTags', value: ['x'] }] } })).status).toBe(403);
  });
});

describe('views', () => {
  it('counts stay exact through creates, changes that leave and enter, deletes and a bulk job; the list follows the sort', async () => {
    // Arrange: two open urgent tickets before the view exists (its first count runs in the background)
    const a = await newTicket(owner, { status: 'open', priority: 'urgent', tags: ['vip'] });
    const b = await newTicket(owner, { status: 'open', priority: 'urgent' });
    const view = await newView(owner, {
      title: 'Urgent, not done',
      conditions: {
        all: [{ field: 'status', operator: 'in', value: ['new', 'open', 'pending'] }],
        any: [
          { field: 'priority', operator: 'is', value: 'urgent' },
          { field: 'tags', operator: 'includes', value: 'vip' },
        ],
      },
      sort: { by: 'createdAt', order: 'asc' },
    });
    expect(await freshCount(owner, view.id)).toBe(2);
    // Act: a create that matches, one that does not, a change that leaves, one that enters, a delete
    const c = await newTicket(owner, { priority: 'low', tags: ['vip'] });
    const d = await newTicket(owner, { priority: 'low' });
    expect((await owner.put(`${TICKETS}/${a.id}`, { ticket: { status: 'resolved' } })).status).toBe(200);
    expect((await owner.put(`${TICKETS}/${d.id}`, { ticket: { priority: 'urgent' } })).status).toBe(200);
    expect((await owner.del(`${TICKETS}/${b.id}`)).status).toBe(204);
    // Assert
    expect(await freshCount(owner, view.id)).toBe(2);
    expect((await allTickets(owner, view.id, 1)).map((t) => t.id)).toEqual([c.id, d.id]);
    // Act: a bulk job moves both out
    const job = await owner.post(`${TICKETS}/bulk_update`, { ids: [c.id, d.id], ticket: { status: 'resolved' } });
    expect(job.status).toBe(202);
    expect(await jobDone(job.body.job.id)).toMatchObject({ succeeded: 2 });
    // Assert: exact and fresh, and not fresh while a change is unapplied
    expect(await freshCount(owner, view.id)).toBe(0);
    expect(await heldChange(view.id, () => owner.put(`${TICKETS}/${c.id}`, { ticket: { status: 'open' } }))).toBe(1);
  }, 120_000);

  it('counts stay exact and fresh through a merge', async () => {
    // Arrange: both tickets in the view
    const view = await newView(owner, {
      title: 'Open merges',
      conditions: {
        all: [
          { field: 'status', operator: 'is', value: 'open' },
          { field: 'tags', operator: 'includes', value: 'merging' },
        ],
      },
    });
    const [target, source] = [await newTicket(owner, { status: 'open', tags: ['merging'] }), await newTicket(owner, { status: 'open', tags: ['merging'] })];
    expect(await freshCount(owner, view.id)).toBe(2);
    // Act: the source is merged (closed) into the target
    const merge = await owner.post(`${TICKETS}/${target.id}/merge`, { ids: [source.id] });
    expect(merge.status, merge.text).toBe(202);
    expect(await jobDone(merge.body.job.id)).toMatchObject({ succeeded: 1 });
    // Assert: exact and fresh, and not fresh while a later change of either ticket is unapplied
    expect(await freshCount(owner, view.id)).toBe(1);
    expect(await heldChange(view.id, () => owner.put(`${TICKETS}/${target.id}`, { ticket: { status: 'pending' } }))).toBe(0);
    expect(await heldChange(view.id, () => owner.del(`${TICKETS}/${source.id}`))).toBe(0);
  }, 120_000);

  it("counts stay exact and fresh through a contact's erasure", async () => {
    // Arrange: two of the contact's tickets in the view, one ticket of someone else
    const view = await newView(owner, {
      title: 'Open erasures',
      conditions: {
        all: [
          { field: 'status', operator: 'is', value: 'open' },
          { field: 'tags', operator: 'includes', value: 'erasing' },
        ],
      },
    });
    const email = `erased.${Date.now()}@customer.example`;
    const [first, second] = [
      await newTicket(owner, { status: 'open', tags: ['erasing'], requesterEmail: email, requesterName: 'Erin Erased' }),
      await newTicket(owner, { status: 'open', tags: ['erasing'], requesterEmail: email, requesterName: 'Erin Erased' }),
    ];
    await newTicket(owner, { status: 'open', tags: ['erasing'], requesterEmail: `kept.${Date.now()}@customer.example` });
    expect(await freshCount(owner, view.id)).toBe(3);
    const contact = (await owner.get(`/helpdesk/api/contacts?search=${encodeURIComponent(email)}`)).body.data[0];
    // Act: the contact is erased (each of their tickets is changed, as ticket.updated)
    const erasure = await owner.post(`/helpdesk/api/v1/contacts/${contact.id}/erase`, {});
    expect(erasure.status, erasure.text).toBe(202);
    expect(await jobDone(erasure.body.job.id)).toMatchObject({ succeeded: 1 });
    // Assert: exact and fresh (the erased tickets stay in the view), and not fresh while a later change is unapplied
    // (an erasure's change that the tally did not count would leave a surplus: fresh one change early)
    expect(await freshCount(owner, view.id)).toBe(3);
    expect(await heldChange(view.id, () => owner.put(`${TICKETS}/${first.id}`, { ticket: { status: 'pending' } }))).toBe(2);
    expect(await heldChange(view.id, () => owner.put(`${TICKETS}/${second.id}`, { ticket: { tags: [] } }))).toBe(1);
  }, 120_000);

  it("a personal view is its creator's alone; shared views are for admins to write", async () => {
    // Arrange
    const mineView = await newView(agent, { title: 'Mine', conditions: { all: [{ field: 'assigneeId', operator: 'is', value: agentId }] }, personal: true });
    // Act
    const [asOther, asOwner, list, counts, sharedByAgent] = await Promise.all([
      other.get(`${VIEWS}/${mineView.id}`),
      owner.get(`${VIEWS}/${mineView.id}/count`),
      other.get(VIEWS),
      other.get(`${VIEWS}/count?ids=${mineView.id}`),
      agent.post(VIEWS, { view: { title: 'Shared', conditions: { all: [] } } }),
    ]);
    // Assert
    expect(asOther.status).toBe(404);
    expect(asOwner.status).toBe(404);
    expect(list.body.views.map((v: Json) => v.id)).not.toContain(mineView.id);
    expect(counts.body).toEqual({ counts: [] });
    expect(sharedByAgent.status).toBe(403);
    expect((await agent.get(`${VIEWS}/${mineView.id}`)).body.view).toMatchObject({ personal: true, ownerId: agentId });
    expect((await other.del(`${VIEWS}/${mineView.id}`)).status).toBe(404);
  });

  it('refuses conditions field by field, and views past the limits', async () => {
    // Act
    const bad = await owner.post(VIEWS, {
      view: { title: 'Bad', conditions: { all: [{ field: 'status', operator: 'is', value: 'done' }], any: [{ field: 'tags', operator: 'greaterThan', value: 1 }] } },
    });
    // Assert
    expectValidation(bad, 'conditions.all.0.value');
    expect(bad.body.error.details.map((d: Json) => d.field)).toEqual(['conditions.all.0.value', 'conditions.any.0.operator']);
    // Arrange: 20 personal views of one user and 100 shared ones, stored (the limits, not the create, are under test)
    const solo = await acct.addUser('member');
    const existingShared = (await owner.get(VIEWS)).body.views.filter((v: Json) => !v.personal).length;
    await storeViews(acct.accountId, [
      ...Array.from({ length: 20 }, (_, i) => ({ title: `P${i}`, personal: true, ownerId: solo.id })),
      ...Array.from({ length: 100 - existingShared }, (_, i) => ({ title: `S${existingShared + i}`, personal: false, ownerId: null })),
    ]);
    const stored = (await as(client, solo.key).get(VIEWS)).body.views;
    expect([stored.filter((v: Json) => v.personal).length, stored.filter((v: Json) => !v.personal).length]).toEqual([20, 100]);
    // Act & Assert
    expectValidation(await as(client, solo.key).post(VIEWS, { view: { title: 'One more', conditions: { all: [] }, personal: true } }), 'personal');
    expectValidation(await owner.post(VIEWS, { view: { title: 'One more', conditions: { all: [] } } }), 'body');
    expect((await agent.post(VIEWS, { view: { title: 'Still mine', conditions: { all: [] }, personal: true } })).status).toBe(201);
  }, 60_000);
});
