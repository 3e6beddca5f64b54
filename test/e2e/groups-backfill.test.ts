import { describe, expect, it } from 'vitest';
import { eventually } from '../support/wait.ts';
import { usePipeline } from '../support/pipeline.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, newTicket, outboxItems, TICKETS, type Desk } from '../support/desk.ts';
import { addMembers, GROUPS, insertAgents, memberLoads, newGroup, tally } from '../support/groups.ts';

const { client } = useGateway();
const { mine, pipeline } = usePipeline(['group-distribution']);

async function setup(n: number) {
  const acct = await createTestAccount();
  mine.add(acct.accountId);
  const d = as(client, acct.ownerKey);
  const agents = await insertAgents(acct.accountId, n);
  return { acct, d, agents };
}

const assigneeOf = async (d: Desk, id: string) => (await d.get(`${TICKETS}/${id}`)).body.ticket.assigneeId as string | null;
const assignedTo = (d: Desk, id: string, what: string) => eventually(async () => (await assigneeOf(d, id)) ?? null, 15_000, what);

describe('backfill: freed capacity assigns the oldest waiting ticket', () => {
  it('resolving a ticket hands the agent the oldest waiting one, and only one under a cap of 1', async () => {
    const { d, agents } = await setup(1);
    const [a] = agents;
    const g = await newGroup(d, { distributionMode: 'roundRobin', maxOpenTickets: 1 });
    await addMembers(d, g.id, [a]);
    const first = await newTicket(d, { groupId: g.id });
    const older = await newTicket(d, { groupId: g.id });
    const newer = await newTicket(d, { groupId: g.id });
    expect([first.assigneeId, older.assigneeId, newer.assigneeId]).toEqual([a, null, null]);
    expect((await d.put(`${TICKETS}/${first.id}`, { ticket: { status: 'resolved' } })).status).toBe(200);
    expect(await assignedTo(d, older.id, 'backfill after resolve')).toBe(a);
    await pipeline().drained();
    expect(await assigneeOf(d, newer.id)).toBeNull();
  });

  it('deleting a ticket and reassigning one by hand free capacity too', async () => {
    const { d, agents } = await setup(2);
    const [a, b] = agents;
    const g = await newGroup(d, { distributionMode: 'leastBusy', maxOpenTickets: 1 });
    await addMembers(d, g.id, [a]);
    const t1 = await newTicket(d, { groupId: g.id });
    const w1 = await newTicket(d, { groupId: g.id });
    const w2 = await newTicket(d, { groupId: g.id });
    expect(t1.assigneeId).toBe(a);
    expect((await d.del(`${TICKETS}/${t1.id}`)).status).toBe(204);
    expect(await assignedTo(d, w1.id, 'backfill after delete')).toBe(a);
    expect((await d.put(`${TICKETS}/${w1.id}`, { ticket: { assigneeId: b } })).status).toBe(200);
    expect(await assignedTo(d, w2.id, 'backfill after reassignment')).toBe(a);
  });

  it('adding a member, raising a cap and reactivating a group assign waiting tickets, oldest first, up to the caps', async () => {
    const { d, agents } = await setup(2);
    const [a, b] = agents;
    const g = await newGroup(d, { distributionMode: 'roundRobin', maxOpenTickets: 1 });
    const waiting: any[] = [];
    for (let i = 0; i < 4; i++) waiting.push(await newTicket(d, { groupId: g.id }));
    expect(waiting.every((t) => t.assigneeId === null)).toBe(true);

    await addMembers(d, g.id, [a]);
    expect(await assignedTo(d, waiting[0].id, 'backfill after member added')).toBe(a);

    await d.put(`${GROUPS}/${g.id}/deactivate`, {});
    await addMembers(d, g.id, [b]);
    await pipeline().drained();
    expect(await assigneeOf(d, waiting[1].id)).toBeNull();
    await d.put(`${GROUPS}/${g.id}/reactivate`, {});
    expect(await assignedTo(d, waiting[1].id, 'backfill after reactivate')).toBe(b);

    await d.put(`${GROUPS}/${g.id}`, { maxOpenTickets: 2 });
    await eventually(async () => ((await assigneeOf(d, waiting[3].id)) ? true : null), 15_000, 'backfill after cap raised');
    const all = await Promise.all(waiting.map((t) => assigneeOf(d, t.id)));
    expect(tally(all)).toEqual({ [a]: 2, [b]: 2 });
    const loads = await memberLoads(d, g.id);
    expect([loads[a].openTicketsInGroup, loads[b].openTicketsInGroup]).toEqual([2, 2]);
  });
});

describe('backfill is exact under concurrency and redelivery', () => {
  it('parallel backfill runs never put an agent over a cap nor assign a ticket twice; each assignment has its events', async () => {
    // This account's events stay in its outbox (the pipeline ignores it): the runs below are the only backfill.
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const agents = await insertAgents(acct.accountId, 3);
    const g = await newGroup(d, { distributionMode: 'leastBusy', maxOpenTickets: 2, isPrivate: false });
    const waiting: any[] = [];
    for (let i = 0; i < 9; i++) waiting.push(await newTicket(d, { groupId: g.id }));
    const groups = await import('#shared/groups/service.ts');
    const tickets = await import('#shared/tickets/service.ts');
    await d.post(`${GROUPS}/${g.id}/members/bulk`, { userIds: agents });
    const runs = await Promise.all(Array.from({ length: 6 }, () => groups.backfillGroup(acct.accountId, g.id, tickets.distributeWaiting)));
    const assignees = await Promise.all(waiting.map((t) => assigneeOf(d, t.id)));
    expect(tally(assignees)).toEqual({ ...Object.fromEntries(agents.map((u) => [u, 2])), null: 3 });
    expect(runs.reduce((s, n) => s + n, 0)).toBe(6);
    // The oldest six got agents; the newest three wait.
    expect(assignees.slice(6)).toEqual([null, null, null]);
    const again = await groups.backfillGroup(acct.accountId, g.id, tickets.distributeWaiting);
    expect(again).toBe(0);
    const events = (await outboxItems(acct.accountId)).filter((e) => e.detail.data.ticket?.id === waiting[0].id).map((e) => e.detail);
    expect(events.map((e) => e.event).sort()).toEqual(['ticket.assignment.changed', 'ticket.created', 'ticket.updated']);
    expect(events.find((e) => e.event === 'ticket.updated').data.ticket.updatedFields).toEqual({ assigneeId: { from: null, to: assignees[0] } });
  });
});

describe('deleting a group with many tickets', () => {
  it('detaches the first tickets in the request and the rest in the background; nothing points at the group afterwards', async () => {
    const { acct, d, agents } = await setup(1);
    const [a] = agents;
    await newGroup(d); // the default, so the group below is an ordinary one
    const g = await newGroup(d, { distributionMode: 'roundRobin' });
    await addMembers(d, g.id, [a]);
    const made: any[] = [];
    for (let i = 0; i < 30; i++) made.push(await newTicket(d, { groupId: g.id, status: i % 10 === 0 ? 'resolved' : 'open' }));
    expect(tally(made.map((t) => t.assigneeId))).toEqual({ [a]: 27, null: 3 });
    expect((await d.del(`${GROUPS}/${g.id}`)).status).toBe(204);
    expect((await d.get(`${GROUPS}/${g.id}`)).status).toBe(404);
    await eventually(
      async () => {
        const all = await Promise.all(made.map((t) => d.get(`${TICKETS}/${t.id}`)));
        return all.every((r) => r.body.ticket.groupId === null) ? true : null;
      },
      20_000,
      'every ticket detached',
    );
    const { ddb, tableName } = await import('#shared/db/client.ts');
    const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
    const left = await eventually(
      async () => {
        const found = [];
        for (const prefix of [`GROUP#${g.id}`, `GLOAD#${g.id}#`, `GTICKET#${g.id}#`, `GWAIT#${g.id}#`]) {
          const out = await ddb.send(
            new QueryCommand({
              TableName: tableName(),
              KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
              ExpressionAttributeValues: { ':pk': `A#${acct.accountId}`, ':p': prefix },
              ConsistentRead: true,
            }),
          );
          found.push(...out.Items!);
        }
        return found.length === 0 ? found : null;
      },
      15_000,
      'no item left naming the group',
    );
    expect(left).toEqual([]);
    // Assignees were kept.
    const t = await d.get(`${TICKETS}/${made[1].id}`);
    expect(t.body.ticket.assigneeId).toBe(a);
  });
});
