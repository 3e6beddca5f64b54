import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, insertTicketRecord, newTicket, TICKETS, type Desk } from '../support/desk.ts';
import { clockPast } from '../support/wait.ts';

const { client } = useGateway();

let acct: TestAccount;
let admin: Desk;
let member: { id: string; key: string };
let viewer: { id: string; key: string };
let agent: Desk;
let readOnly: Desk;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  [member, viewer] = await Promise.all([acct.addUser('member'), acct.addUser('viewer')]);
  agent = as(client, member.key);
  readOnly = as(client, viewer.key);
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

describe('POST /tickets', () => {
  it('answers 201 {ticket} with defaults new/normal/question when only a subject is given', async () => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'Cannot log in' } });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['ticket']);
    expect(res.body.ticket).toMatchObject({ subject: 'Cannot log in', status: 'new', priority: 'normal', type: 'question', assigneeId: null, tags: [], customFields: [] });
    expect(res.body.ticket.id).toMatch(/^tkt_/);
    expect(res.body.ticket.createdAt).toMatch(ISO);
    expect(res.body.ticket.updatedAt).toBe(res.body.ticket.createdAt);
  });

  it('stores every given field: status, priority, type, tags, requester and an agent assignee', async () => {
    const input = {
      subject: 'Invoice wrong',
      status: 'open',
      priority: 'high',
      type: 'incident',
      tags: ['billing', 'vip'],
      requesterEmail: 'carla@customer.example',
      requesterName: 'Carla Customer',
      assigneeId: member.id,
    };

    const res = await admin.post(TICKETS, { ticket: input });

    expect(res.status).toBe(201);
    expect(res.body.ticket).toMatchObject(input);
  });

  it('accepts an admin (the owner) as assignee', async () => {
    const res = await agent.post(TICKETS, { ticket: { subject: 'Escalate', assigneeId: acct.ownerId } });

    expect(res.status).toBe(201);
    expect(res.body.ticket.assigneeId).toBe(acct.ownerId);
  });

  describe('assigneeId must be an active agent-or-above user of the account', () => {
    const cases: [string, () => Promise<string>][] = [
      ['a viewer', async () => viewer.id],
      [
        'a suspended member',
        async () => {
          const u = await acct.addUser('member');
          const res = await client.request('PATCH', `/playbook/api/v1/users/${u.id}`, { token: acct.ownerKey, body: { status: 'suspended' } });
          expect(res.status).toBe(200);
          return u.id;
        },
      ],
      ['an unknown user id', async () => 'usr_00000000000000000000000000'],
      ['a member of another account', async () => (await (await createTestAccount()).addUser('member')).id],
    ];

    it.each(cases)('refuses %s with 422 VALIDATION_ERROR naming assigneeId', async (_label, makeAssignee) => {
      const assigneeId = await makeAssignee();

      const res = await admin.post(TICKETS, { ticket: { subject: 'Assign me', assigneeId } });

      expect(res.status).toBe(422);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'assigneeId', message: expect.any(String) })]));
    });

    it('refuses a viewer as assignee on PUT too, leaving the ticket unchanged', async () => {
      const t = await newTicket(admin, { assigneeId: member.id });

      const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { assigneeId: viewer.id } });

      expect(res.status).toBe(422);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain('assigneeId');
      expect((await admin.get(`${TICKETS}/${t.id}`)).body.ticket.assigneeId).toBe(member.id);
    });
  });

  it('refuses status closed on create with 403 CLOSED_STATUS_SYSTEM_ONLY', async () => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'Close me', status: 'closed' } });

    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, error: { code: 'CLOSED_STATUS_SYSTEM_ONLY', message: expect.any(String) } });
  });

  it.each([
    ['an empty object', {}],
    ['a string wrapper', { ticket: 'x' }],
    ['a null wrapper', { ticket: null }],
    ['an array wrapper', { ticket: [] }],
  ])('answers 400 BAD_REQUEST for a body with %s instead of the ticket object', async (_label, body) => {
    const res = await admin.post(TICKETS, body);

    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'BAD_REQUEST', message: expect.any(String) } });
  });

  it.each([
    ['malformed JSON', '{"ticket": {"subject": '],
    ['a JSON array', '[{"ticket":{"subject":"x"}}]'],
    ['a JSON string', '"ticket"'],
  ])('answers 400 BAD_REQUEST for %s', async (_label, raw) => {
    const res = await admin.raw('POST', TICKETS, raw);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it.each([
    ['an empty subject', { subject: '' }, 'subject'],
    ['a blank subject', { subject: '   ' }, 'subject'],
    ['no subject', { priority: 'high' }, 'subject'],
    ['an unknown priority', { subject: 'x', priority: 'critical' }, 'priority'],
    ['an unknown status', { subject: 'x', status: 'waiting' }, 'status'],
    ['an unknown type', { subject: 'x', type: 'bug' }, 'type'],
    ['tags that are not strings', { subject: 'x', tags: [1, 2] }, 'tags.0'],
    ['an invalid requester email', { subject: 'x', requesterEmail: 'not-an-email' }, 'requesterEmail'],
  ])('answers 422 VALIDATION_ERROR with details for %s', async (_label, ticket, field) => {
    const res = await admin.post(TICKETS, { ticket });

    expect(res.status).toBe(422);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
  });
});

describe('GET /tickets/:id', () => {
  it('answers {ticket} equal to what create returned', async () => {
    const created = await newTicket(admin, { tags: ['x'], priority: 'urgent' });

    const res = await admin.get(`${TICKETS}/${created.id}`);

    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ticket: created });
  });

  it('answers 404 NOT_FOUND in the support-desk envelope for an unknown id', async () => {
    const res = await admin.get(`${TICKETS}/tkt_00000000000000000000000000`);

    expect(res.status).toBe(404);
    expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });
});

describe('PUT /tickets/:id', () => {
  it('changes only the given fields', async () => {
    const before = await newTicket(admin, { subject: 'Old subject', priority: 'high', type: 'problem', tags: ['a'], requesterEmail: 'r@customer.example', requesterName: 'R', assigneeId: member.id });
    await clockPast(before.updatedAt);

    const res = await admin.put(`${TICKETS}/${before.id}`, { ticket: { subject: 'New subject' } });

    expect(res.status).toBe(200);
    expect(res.body.ticket).toEqual({ ...before, subject: 'New subject', updatedAt: expect.any(String) });
    expect(res.body.ticket.updatedAt > before.updatedAt).toBe(true);
    expect((await admin.get(`${TICKETS}/${before.id}`)).body.ticket).toEqual(res.body.ticket);
  });

  it('changes status, priority, type and tags together and can unassign with null', async () => {
    const before = await newTicket(admin, { assigneeId: member.id });

    const res = await admin.put(`${TICKETS}/${before.id}`, { ticket: { status: 'pending', priority: 'low', type: 'task', tags: ['x', 'y'], assigneeId: null } });

    expect(res.status).toBe(200);
    expect(res.body.ticket).toMatchObject({ status: 'pending', priority: 'low', type: 'task', tags: ['x', 'y'], assigneeId: null, subject: before.subject });
  });

  it('refuses status closed with 403 CLOSED_STATUS_SYSTEM_ONLY and leaves the ticket as it was', async () => {
    const before = await newTicket(admin, { status: 'open' });

    const res = await admin.put(`${TICKETS}/${before.id}`, { ticket: { status: 'closed' } });

    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, error: { code: 'CLOSED_STATUS_SYSTEM_ONLY' } });
    expect((await admin.get(`${TICKETS}/${before.id}`)).body.ticket).toEqual(before);
  });

  it('refuses any change to a closed ticket with 403 TICKET_CLOSED', async () => {
    const closed = await insertTicketRecord(acct.accountId, { status: 'closed' });

    const res = await admin.put(`${TICKETS}/${closed.id}`, { ticket: { priority: 'urgent' } });

    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ success: false, error: { code: 'TICKET_CLOSED' } });
    expect((await admin.get(`${TICKETS}/${closed.id}`)).body.ticket).toMatchObject({ status: 'closed', priority: 'normal' });
  });

  it('refuses reopening a closed ticket with 403 TICKET_CLOSED', async () => {
    const closed = await insertTicketRecord(acct.accountId, { status: 'closed' });

    const res = await admin.put(`${TICKETS}/${closed.id}`, { ticket: { status: 'open' } });

    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('TICKET_CLOSED');
  });

  it.each([
    ['an empty object', {}],
    ['a string wrapper', { ticket: 'x' }],
  ])('answers 400 BAD_REQUEST for %s instead of the ticket object', async (_label, body) => {
    const t = await newTicket(admin);

    const res = await admin.put(`${TICKETS}/${t.id}`, body);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 400 BAD_REQUEST for malformed JSON', async () => {
    const t = await newTicket(admin);

    const res = await admin.raw('PUT', `${TICKETS}/${t.id}`, '{"ticket": {');

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it.each([
    ['an empty subject', { subject: '' }, 'subject'],
    ['an unknown priority', { priority: 'asap' }, 'priority'],
  ])('answers 422 VALIDATION_ERROR with details for %s and changes nothing', async (_label, ticket, field) => {
    const t = await newTicket(admin);

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual(expect.arrayContaining([{ field, message: expect.any(String) }]));
    expect((await admin.get(`${TICKETS}/${t.id}`)).body.ticket).toEqual(t);
  });

  it('answers 404 NOT_FOUND for an unknown ticket', async () => {
    const res = await admin.put(`${TICKETS}/tkt_00000000000000000000000000`, { ticket: { subject: 'x' } });

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('DELETE /tickets/:id', () => {
  it('answers 204 with no body, after which the ticket is 404 NOT_FOUND', async () => {
    const t = await newTicket(admin);

    const res = await admin.del(`${TICKETS}/${t.id}`);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const gone = await admin.get(`${TICKETS}/${t.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('answers 404 NOT_FOUND to a second delete and to a PUT of the deleted ticket', async () => {
    const t = await newTicket(admin);
    await admin.del(`${TICKETS}/${t.id}`);

    const again = await admin.del(`${TICKETS}/${t.id}`);
    const put = await admin.put(`${TICKETS}/${t.id}`, { ticket: { subject: 'zombie' } });

    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('NOT_FOUND');
    expect(put.status).toBe(404);
  });
});

describe('permissions', () => {
  it('lets a viewer read a ticket and the list', async () => {
    const t = await newTicket(admin);

    const one = await readOnly.get(`${TICKETS}/${t.id}`);
    const list = await readOnly.get(`${TICKETS}?page_size=100`);

    expect(one.status).toBe(200);
    expect(one.body.ticket.id).toBe(t.id);
    expect(list.status).toBe(200);
    expect(list.body.tickets.map((x: { id: string }) => x.id)).toContain(t.id);
  });

  it('refuses every viewer write with 403 FORBIDDEN and changes nothing', async () => {
    const t = await newTicket(admin);

    const create = await readOnly.post(TICKETS, { ticket: { subject: 'from viewer' } });
    const update = await readOnly.put(`${TICKETS}/${t.id}`, { ticket: { subject: 'from viewer' } });
    const del = await readOnly.del(`${TICKETS}/${t.id}`);

    for (const res of [create, update, del]) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, error: { code: 'FORBIDDEN', message: expect.any(String) } });
    }
    expect((await admin.get(`${TICKETS}/${t.id}`)).body.ticket).toEqual(t);
  });

  it('lets a member (agent) create, update and delete tickets', async () => {
    const created = await agent.post(TICKETS, { ticket: { subject: 'agent ticket' } });
    const updated = await agent.put(`${TICKETS}/${created.body.ticket.id}`, { ticket: { priority: 'high' } });
    const deleted = await agent.del(`${TICKETS}/${created.body.ticket.id}`);

    expect(created.status).toBe(201);
    expect(updated.status).toBe(200);
    expect(updated.body.ticket.priority).toBe('high');
    expect(deleted.status).toBe(204);
  });

  it("accepts a member's session token as well as an API key", async () => {
    const token = await acct.session(member.id);

    const res = await client.request('POST', TICKETS, { token, body: { ticket: { subject: 'via session' } } });

    expect(res.status).toBe(201);
  });

  it('answers 401 UNAUTHORIZED without credentials', async () => {
    const res = await client.request('GET', TICKETS);

    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it("treats another account's ticket as not found for read, update and delete, and never lists it", async () => {
    const other = await createTestAccount();
    const otherAdmin = as(client, other.ownerKey);
    const foreign = await newTicket(otherAdmin, { subject: 'secret' });

    const get = await admin.get(`${TICKETS}/${foreign.id}`);
    const put = await admin.put(`${TICKETS}/${foreign.id}`, { ticket: { subject: 'hijacked' } });
    const del = await admin.del(`${TICKETS}/${foreign.id}`);
    const list = await admin.get(`${TICKETS}?page_size=100`);

    for (const res of [get, put, del]) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
    expect(list.body.tickets.map((x: { id: string }) => x.id)).not.toContain(foreign.id);
    expect((await otherAdmin.get(`${TICKETS}/${foreign.id}`)).body.ticket).toEqual(foreign);
  });
});
