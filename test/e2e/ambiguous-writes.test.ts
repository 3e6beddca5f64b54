import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { STORE_ANSWERS } from '../../local/dynamodb-proxy.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { accountItems, as, TICKETS, type Desk } from '../support/desk.ts';
import { addMembers, GROUPS, insertAgents, memberLoads, newGroup } from '../support/groups.ts';
import { localLambda } from '../support/lambda.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

const UPLOADS = '/helpdesk/api/uploads';
const MESSAGES = '/helpdesk/api/messages';
const ATTACHMENTS = '/helpdesk/api/attachments';
const CONTACTS = '/helpdesk/api/contacts';
const ORGANIZATIONS = '/helpdesk/api/organizations';

/**
 * A write whose answer never arrives (docs/decisions.md "Ambiguous writes"): the
 * store commits a ticket's transaction and its answer is lost, so the function's
 * SDK times out on it and cannot tell whether it committed. Whatever
 * follows (the SDK's retry, a 503 and the client's retry with its
 * Idempotency-Key), the create makes one ticket, assigned once.
 *
 * The functions wait 1 s for an answer, not the deployed 5 s (DYNAMODB_REQUEST_TIMEOUT_MS, as the fault tests run
 * them: decisions "Ambiguous writes"): a lost answer takes the same paths, a fifth as long. The one test whose point
 * is the length (a retry that goes out past the stamp bound) gives the tickets function its 5 s back.
 */
// This file's own fixtures keep the default 5 s: their client is made here, before the functions' setting (as in
// faults.test.ts, where 1 s failed them on a loaded machine).
await import('#shared/db/client.ts');
process.env.DYNAMODB_REQUEST_TIMEOUT_MS = '1000';
const store = useStoreProxy();
const { client } = useGateway();

/** A fresh account whose roundRobin group has two agents: a ticket created into it takes a slot of one. */
async function setup() {
  const acct = await createTestAccount();
  const d = as(client, acct.ownerKey);
  const agents = await insertAgents(acct.accountId, 2);
  const group = await newGroup(d, { distributionMode: 'roundRobin' });
  await addMembers(d, group.id, agents);
  return { acct, d, agents, group };
}

/** Whether a store request is the transaction that creates a ticket of this account. */
const createsTicket = (operation: string, request: Record<string, any>, accountId: string) =>
  operation === 'TransactWriteItems' &&
  (request.TransactItems ?? []).some((t: any) => t.Put?.Item?.type?.S === 'ticket' && t.Put.Item.pk?.S === `A#${accountId}` && t.Put.ConditionExpression?.includes('attribute_not_exists'));

/** The account's tickets as stored, and the open-ticket counters of the group's members. */
async function stored(accountId: string, d: Desk, groupId: string) {
  const tickets = await accountItems(accountId, 'TICKET#', 'ticket');
  const loads = await memberLoads(d, groupId);
  return {
    items: tickets,
    ids: tickets.map((t) => t.id as string),
    assigned: tickets.map((t) => t.assigneeId as string | null),
    openTickets: Object.values(loads).reduce((n, l) => n + l.openTickets, 0),
    inGroup: Object.values(loads).reduce((n, l) => n + l.openTicketsInGroup, 0),
  };
}

describe('a create whose committed transaction answers nothing', () => {
  it('answered 503: the retry with its Idempotency-Key answers the ticket that was made, and makes no other', async () => {
    const { acct, d, group } = await setup();
    // The first attempt commits and its answer is lost; every later attempt of the create is throttled, so the request
    // ends in a 503 while its ticket exists.
    let attempts = 0;
    store.inject((operation, request) => {
      if (!createsTicket(operation, request, acct.accountId)) return undefined;
      attempts += 1;
      return attempts === 1 ? STORE_ANSWERS.answerLost() : STORE_ANSWERS.throughputExceeded();
    });
    const key = `ambiguous-${acct.accountId}`;
    const body = { ticket: { subject: 'Answer lost, then throttled', groupId: group.id } };

    const first = await client.request('POST', TICKETS, { token: acct.ownerKey, body, headers: { 'Idempotency-Key': key } });
    store.inject(undefined);
    expect(first.status, first.text).toBe(503);
    expect(attempts).toBeGreaterThan(1);

    const retry = await client.request('POST', TICKETS, { token: acct.ownerKey, body, headers: { 'Idempotency-Key': key } });
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    const after = await stored(acct.accountId, d, group.id);
    expect(after.ids).toEqual([retry.body.ticket.id]);
    expect(after.assigned).toEqual([retry.body.ticket.assigneeId]);
    expect([after.openTickets, after.inGroup]).toEqual([1, 1]);
  }, 60_000);
});

describe('a message whose committed transaction answers nothing', () => {
  it('answered 503: its attachment stays, and the retry with its Idempotency-Key answers the message that was made', async () => {
    const acct = await createTestAccount();
    const d = as(client, acct.ownerKey);
    const session = await acct.session(acct.ownerId);
    const ticket = (await d.post(TICKETS, { ticket: { subject: 'Attachment, answer lost' } })).body.ticket;
    const bytes = Buffer.from(`attached ${acct.accountId}`);
    const upload = (await d.post(UPLOADS, { name: 'notes.txt', size: bytes.length, contentType: 'text/plain' })).body.data;
    expect((await fetch(upload.uploadUrl, { method: upload.uploadMethod, headers: upload.uploadHeaders, body: bytes })).status).toBe(200);
    // The message's transaction commits and its answer is lost; its retries are throttled: a 503.
    let attempts = 0;
    store.inject((operation, request) => {
      if (operation !== 'TransactWriteItems' || !JSON.stringify(request).includes(`MSG#`) || !JSON.stringify(request).includes(ticket.id)) return undefined;
      attempts += 1;
      return attempts === 1 ? STORE_ANSWERS.answerLost() : STORE_ANSWERS.throughputExceeded();
    });
    const body = { ticket_id: ticket.id, type: 'note', content: 'with a file', attachments: [{ token: upload.token }] };
    const send = () => client.request('POST', MESSAGES, { token: session, body, headers: { 'Idempotency-Key': `message-${ticket.id}` } });

    const first = await send();
    store.inject(undefined);
    expect(first.status, first.text).toBe(503);

    const retry = await send();
    expect(retry.status, retry.text).toBe(201);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    const listed = (await client.request('GET', `${MESSAGES}?ticket_id=${ticket.id}&limit=100`, { token: session })).body.data;
    expect(listed.map((m: { id: string }) => m.id)).toEqual([retry.body.data.id]);
    const attachment = (await d.get(`${ATTACHMENTS}/${retry.body.data.attachments[0].id}`)).body.data;
    const got = await fetch(attachment.url);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
  }, 60_000);
});

type Arranged = { acct: TestAccount; d: Desk; id?: string };

/** A ticket field: its item, and where its answer names it. */
const TICKET_FIELD = { type: 'ticketField', prefix: 'TFIELD#', path: () => '/helpdesk/api/v1/ticket_fields', id: (answer: any) => answer.ticketField.id as string };
/** A member of a new group: part of the group's item, listed by the group's members. */
const GROUP_MEMBER = {
  type: 'group',
  arrange: async ({ d }: Arranged) => (await newGroup(d)).id as string,
  made: async ({ d, id }: Arranged) => (await d.get(`${GROUPS}/${id}/members`)).body.data.map((m: { userId: string }) => m.userId) as string[],
};

/**
 * The creates that carry their answer in their own transaction besides tickets and messages: the item each makes
 * (its type and sort key prefix), where its answer names it, and what a retry did without the fix.
 */
const OTHER_CREATES: {
  what: string;
  unique: string;
  type: string;
  /** The made item's sort key prefix (none: `made` says what was made). */
  prefix?: string;
  path: (a: Arranged) => string;
  body: (a: Arranged) => unknown;
  id: (answer: any) => string;
  /** Something the create needs first (an `id` for its path), made without faults. */
  arrange?: (a: Arranged) => Promise<string>;
  /** What the create made, when it is not an item of its own (a member is part of its group). */
  made?: (a: Arranged) => Promise<string[]>;
  /** Which of the create's transactions loses its answer, by its items (default: the one that puts a `type` item). */
  loses?: (items: any[]) => boolean;
}[] = [
  {
    what: 'a contact',
    unique: 'not 409 for its own email',
    type: 'contact',
    prefix: 'CONTACT#',
    path: () => CONTACTS,
    body: ({ acct }) => ({ name: 'Answer Lost', email: `lost.${acct.accountId.toLowerCase()}@customer.example` }),
    id: (answer) => answer.data.id,
  },
  {
    what: 'an organization',
    unique: 'not 409 for its own domain',
    type: 'organization',
    prefix: 'ORG#',
    path: () => ORGANIZATIONS,
    body: ({ acct }) => ({ name: 'Answer Lost Ltd', organizationalDomain: `lost-${acct.accountId.toLowerCase().replace(/_/g, '-')}.example` }),
    id: (answer) => answer.data.id,
  },
  { what: 'a group', unique: 'and makes no other', type: 'group', prefix: 'GROUP#', path: () => GROUPS, body: () => ({ name: 'Answer lost' }), id: (answer) => answer.data.id },
  {
    what: 'a user',
    unique: 'not 409 for its own email',
    type: 'user',
    prefix: 'USER#',
    path: () => '/playbook/api/v1/users',
    body: ({ acct }) => ({ email: `lost.${acct.accountId.toLowerCase()}@team.example`, name: 'Answer Lost', role: 'member', send_invitation: false }),
    id: (answer) => answer.id,
  },
  {
    what: 'an API key',
    unique: 'and mints no other',
    type: 'apiKey',
    prefix: 'APIKEYID#',
    path: () => '/playbook/api/v1/api-keys',
    body: () => ({ name: 'answer lost' }),
    id: (answer) => answer.id,
    made: async ({ acct }) => (await accountItems(acct.accountId, 'APIKEYID#', 'apiKey')).map((item) => item.keyId as string),
  },
  {
    what: 'a webhook',
    unique: 'and makes no other (no event delivered twice)',
    type: 'webhook',
    prefix: 'WEBHOOK#',
    path: () => '/helpdesk/api/v1/webhooks',
    body: () => ({ webhook: { name: 'Answer lost', targetUrl: 'https://hooks.customer.example/lost', events: ['ticket.created'] } }),
    id: (answer) => answer.webhook.id,
  },
  { what: 'a ticket field', unique: 'and makes no other under another key', ...TICKET_FIELD, body: () => ({ ticketField: { title: 'Answer lost', type: 'text' } }) },
  {
    what: 'a ticket field of 50 options',
    unique: 'its last transaction the one that lost it: the field stays whole, not removed as a failed create nor made again',
    ...TICKET_FIELD,
    body: () => ({ ticketField: { title: 'Many', type: 'dropdown', options: Array.from({ length: 50 }, (_, i) => ({ name: `Option ${i}`, value: `option_${i}` })) } }),
    // 45 options go with the field; the other 5 follow in a transaction of their own, the last one.
    loses: (items) => items.some((t) => t.Put?.Item?.type?.S === 'fieldOption') && !items.some((t) => t.Put?.Item?.type?.S === 'ticketField'),
  },
  {
    what: 'a field option',
    unique: 'not 409 for its own value',
    type: 'fieldOption',
    prefix: 'TFOPT#',
    arrange: async ({ d }) => (await d.post('/helpdesk/api/v1/ticket_fields', { ticketField: { title: 'Tier', type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] } })).body.ticketField.id,
    path: ({ id }) => `/helpdesk/api/v1/ticket_fields/${id}/options`,
    body: () => ({ customFieldOption: { name: 'Lost', value: 'lost' } }),
    id: (answer) => answer.customFieldOption.id,
  },
  {
    what: 'an automation',
    unique: 'and makes no other',
    type: 'automation',
    prefix: 'AUTOMATION#',
    path: () => '/helpdesk/api/automations',
    body: () => ({ name: 'Answer lost', isActive: false, rule: { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'priority', value: 'high' }] } }),
    id: (answer) => answer.data.id,
  },
  {
    what: 'an SLA policy',
    unique: 'and makes no other',
    type: 'slaPolicy',
    prefix: 'SLAPOLICY#',
    path: () => '/helpdesk/api/sla-policies',
    body: () => {
      const targets = { urgent: 60, high: 120, normal: 240, low: 480 };
      return { name: 'Answer lost', timeMode: 'calendarHours', targets: { firstReply: targets, nextReply: targets, resolution: targets } };
    },
    id: (answer) => answer.data.id,
  },
  {
    what: 'a view',
    unique: 'and makes no other',
    type: 'view',
    prefix: 'VIEW#',
    path: () => '/helpdesk/api/v1/views',
    body: () => ({ view: { title: 'Answer lost', conditions: { all: [{ field: 'status', operator: 'in', value: ['new', 'open'] }] } } }),
    id: (answer) => answer.view.id,
  },
  {
    what: 'a macro',
    unique: 'and makes no other',
    type: 'macro',
    prefix: 'MACRO#',
    path: () => '/helpdesk/api/v1/macros',
    body: () => ({ macro: { title: 'Answer lost', actions: [{ field: 'addTags', value: ['lost'] }] } }),
    id: (answer) => answer.macro.id,
  },
  {
    what: 'a group member',
    unique: 'not 409 for the member it added',
    ...GROUP_MEMBER,
    path: ({ id }) => `${GROUPS}/${id}/members`,
    body: ({ acct }) => ({ userId: acct.ownerId }),
    id: (answer) => answer.data.userId,
  },
  {
    what: 'a bulk add of group members',
    unique: 'not an answer that they were members already',
    ...GROUP_MEMBER,
    path: ({ id }) => `${GROUPS}/${id}/members/bulk`,
    body: ({ acct }) => ({ userIds: [acct.ownerId] }),
    id: (answer) => answer.data.added[0]?.userId,
  },
];

describe('the other creates whose committed transaction answers nothing', () => {
  /** The accounts whose create is under way, each row its own, and which of its transactions loses its answer: the rows run side by side. */
  const losing = new Map<string, { loses: (items: any[]) => boolean; attempts: number }>();
  beforeAll(() =>
    store.injectForAll((operation, request) => {
      if (operation !== 'TransactWriteItems') return undefined;
      const items = request.TransactItems ?? [];
      for (const [accountId, row] of losing) {
        if (!items.some((t: any) => t.Put?.Item?.pk?.S === `A#${accountId}`) || !row.loses(items)) continue;
        // The create's transaction commits and its answer is lost; its retries are throttled: a 503.
        row.attempts += 1;
        return row.attempts === 1 ? STORE_ANSWERS.answerLost() : STORE_ANSWERS.throughputExceeded();
      }
      return undefined;
    }),
  );
  afterAll(() => store.injectForAll(undefined));

  it.concurrent.for<(typeof OTHER_CREATES)[number]>(OTHER_CREATES)(
    '$what: answered 503, the retry with its Idempotency-Key answers what was made, $unique',
    { timeout: 60_000 },
    async (create, { expect }) => {
      const acct = await createTestAccount();
      const arranged: Arranged = { acct, d: as(client, acct.ownerKey) };
      if (create.arrange) arranged.id = await create.arrange(arranged);
      const made = create.made ?? (async () => (await accountItems(acct.accountId, create.prefix!, create.type)).map((item) => item.id as string));
      const before = await made(arranged);
      losing.set(acct.accountId, { loses: create.loses ?? ((items) => items.some((t) => t.Put?.Item?.type?.S === create.type)), attempts: 0 });
      const send = () => client.request('POST', create.path(arranged), { token: acct.ownerKey, body: create.body(arranged), headers: { 'Idempotency-Key': `${create.type}-${acct.accountId}` } });

      const first = await send();
      losing.delete(acct.accountId);
      expect(first.status, first.text).toBe(503);

      const retry = await send();
      expect(retry.status, retry.text).toBe(201);
      expect(retry.headers.get('idempotency-replayed')).toBe('true');
      const after = await made(arranged);
      expect(after.filter((id) => !before.includes(id))).toEqual([create.id(retry.body)]);
      // What the retry answered is what is stored (a field of 50 options kept all of them).
      if (create.prefix === 'TFIELD#') expect((await accountItems(acct.accountId, `TFOPT#${create.id(retry.body)}#`, 'fieldOption')).length).toBe(retry.body.ticketField.options?.length ?? 0);
    },
  );
});

describe('a single conditional put whose answer is lost', () => {
  it("the claim of an Idempotency-Key: the SDK's retry finds the request's own claim, not another request's (no 409)", async () => {
    const { acct, d, group } = await setup();
    let lost = 0;
    store.inject((operation, request) => {
      if (operation !== 'PutItem' || lost > 0 || request.Item?.pk?.S !== `A#${acct.accountId}` || !String(request.Item?.sk?.S).startsWith('IDEMP#')) return undefined;
      lost += 1;
      return STORE_ANSWERS.answerLost();
    });
    const key = `claim-lost-${acct.accountId}`;
    const body = { ticket: { subject: 'Claim answer lost', groupId: group.id } };

    const res = await client.request('POST', TICKETS, { token: acct.ownerKey, body, headers: { 'Idempotency-Key': key } });
    store.inject(undefined);

    expect(lost).toBe(1);
    expect(res.status, res.text).toBe(201);
    const repeat = await client.request('POST', TICKETS, { token: acct.ownerKey, body, headers: { 'Idempotency-Key': key } });
    expect([repeat.status, repeat.headers.get('idempotency-replayed'), repeat.body.ticket?.id]).toEqual([201, 'true', res.body.ticket.id]);
    expect((await stored(acct.accountId, d, group.id)).ids).toEqual([res.body.ticket.id]);
  }, 60_000);
});

// Last in the file: the tickets function cold-starts once with the deployed timeout, and nothing after it needs the file's.
describe('a create whose committed transaction answers nothing, answered within the deployed timeout', () => {
  it('is retried as the same transaction, past the stamp bound: one ticket, one assignment, answered 201', async () => {
    const { acct, d, group } = await setup();
    // The deployed timeout (5 s): the SDK's retry goes out later than STAMP_MAX_AGE_MS (4 s) after the change's stamp.
    const tickets = (await localLambda()).byEntry('functions/tickets/handler.ts');
    await tickets.updateEnvironment({ DYNAMODB_REQUEST_TIMEOUT_MS: undefined });
    onTestFinished(() => tickets.updateEnvironment({ DYNAMODB_REQUEST_TIMEOUT_MS: '1000' }));
    let lost = 0;
    store.inject((operation, request) => {
      if (!createsTicket(operation, request, acct.accountId) || lost > 0) return undefined;
      lost += 1;
      return STORE_ANSWERS.answerLost();
    });

    const sent = Date.now();
    const res = await d.post(TICKETS, { ticket: { subject: 'Answer lost', groupId: group.id } });
    store.inject(undefined);

    expect(lost).toBe(1);
    expect(res.status, res.text).toBe(201);
    const after = await stored(acct.accountId, d, group.id);
    expect(after.ids).toEqual([res.body.ticket.id]);
    // Its retry went out past the stamp bound (a 5 s timeout), so its entry in the change index moved to a later time
    // than its updatedAt (docs/history.md): an export reader that passed its updatedAt still finds it.
    const [item] = after.items;
    expect(Date.parse(String(item.gsi4sk).split('#')[0])).toBeGreaterThan(Math.max(Date.parse(item.updatedAt), sent + 4_000));
    expect(after.assigned).toEqual([res.body.ticket.assigneeId]);
    expect(res.body.ticket.assigneeId).not.toBeNull();
    expect([after.openTickets, after.inGroup]).toEqual([1, 1]);
  }, 60_000);
});
