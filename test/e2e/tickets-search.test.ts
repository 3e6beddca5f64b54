import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, newTicket, storeTickets, ticketRecord, TICKETS, type Desk, type Json } from '../support/desk.ts';
import { storeLegacyTicketIdWords, ticketWordItems } from '../support/store.ts';

/** `search` on the ticket list (decisions §16): word prefixes through the word index, combined with the filters and sorts. */
const { client } = useGateway();

let acct: TestAccount;
let admin: Desk;
let agentId: string;
const t: Record<string, Json> = {};

const ids = async (query: string): Promise<string[]> => {
  const res = await admin.get(`${TICKETS}?${query}`);
  expect(res.status, res.text).toBe(200);
  return res.body.tickets.map((x: Json) => x.id);
};

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  agentId = (await acct.addUser('member')).id;
  t.printer = await newTicket(admin, {
    subject: 'Printer on fire in Zürich',
    status: 'open',
    priority: 'urgent',
    requesterEmail: 'Ops.Team@Acme.example',
    requesterName: 'José Núñez',
    tags: ['hardware', 'vip-customer'],
  });
  t.printer2 = await newTicket(admin, { subject: 'Printer jammed', status: 'pending', priority: 'low', requesterEmail: 'ann@beta.example', tags: ['hardware'] });
  t.login = await newTicket(admin, { subject: 'Cannot log in', status: 'open', priority: 'high', requesterEmail: 'ops@acme.example', assigneeId: agentId });
  t.invoice = await newTicket(admin, { subject: 'Invoice question', status: 'new', priority: 'normal', tags: ['billing'] });
});

describe('ticket search', () => {
  it('finds a subject word by prefix, combined with a status filter', async () => {
    expect(new Set(await ids('search=print'))).toEqual(new Set([t.printer.id, t.printer2.id]));
    expect(await ids('search=print&status=pending')).toEqual([t.printer2.id]);
    expect(await ids('search=ohn')).toEqual([]);
  });

  it("finds a requester's email by prefix, combined with an assignee filter", async () => {
    // The whole address is a word, and so are its parts: `ops@acme` is a prefix of ops@acme.example only.
    expect(await ids('search=ops%40acme')).toEqual([t.login.id]);
    expect(new Set(await ids('search=acme'))).toEqual(new Set([t.printer.id, t.login.id]));
    expect(await ids(`search=acme&assignee_id=${agentId}`)).toEqual([t.login.id]);
    expect(await ids('search=acme.exa&priority=urgent')).toEqual([t.printer.id]);
  });

  it('finds a tag (whole or by its parts), combined with a priority filter', async () => {
    expect(new Set(await ids('search=hardware'))).toEqual(new Set([t.printer.id, t.printer2.id]));
    expect(await ids('search=hardware&priority=low')).toEqual([t.printer2.id]);
    expect(await ids('search=vip-cust')).toEqual([t.printer.id]);
    expect(await ids('search=billing&status=new')).toEqual([t.invoice.id]);
  });

  it('ignores case and accents, and every term must match', async () => {
    expect(await ids('search=ZURICH')).toEqual([t.printer.id]);
    expect(await ids('search=jose%20nunez')).toEqual([t.printer.id]);
    expect(await ids('search=Núñ')).toEqual([t.printer.id]);
    expect(await ids('search=printer%20jam')).toEqual([t.printer2.id]);
    expect(await ids('search=printer%20invoice')).toEqual([]);
  });

  it('finds a ticket by its id prefix', async () => {
    expect(await ids(`search=${t.invoice.id}`)).toEqual([t.invoice.id]);
  });

  it("finds a ticket by its id, its id's time part or a prefix of either, through the ticket's own key: no word item is written for them (issue 42)", async () => {
    const id: string = t.invoice.id;
    const time = id.slice('tkt_'.length);
    expect(await ids(`search=${time}`)).toEqual([id]);
    expect(await ids(`search=${time.toLowerCase()}`)).toEqual([id]);
    expect(await ids(`search=${id.slice(0, -2)}`)).toContain(id);
    expect(await ids(`search=${id}&status=new`)).toEqual([id]);
    expect(await ids(`search=${id}&status=open`)).toEqual([]);
    expect(await ids(`search=${id}%20billing`)).toEqual([id]);
    expect(await ids(`search=${id}%20printer`)).toEqual([]);
    // `tkt` starts every ticket's id.
    const all = (await admin.get(`${TICKETS}?page_size=100`)).body.tickets.map((x: Json) => x.id);
    expect(new Set(await ids('search=tkt&page_size=100'))).toEqual(new Set(all));
    // The index holds the tickets' other words, and none of their id words.
    const items = [...(await ticketWordItems(acct.accountId, 't')), ...(await ticketWordItems(acct.accountId, time[0].toLowerCase()))];
    expect(items.filter((i) => i.id === t.printer.id).map((i) => i.word)).toContain('team');
    expect(items.filter((i) => i.word.startsWith('tkt_') || i.word === i.id.slice('tkt_'.length).toLowerCase())).toEqual([]);
  });

  it("finds a ticket whose subject names another ticket's id beside that ticket, and a stale word item of an id decides nothing", async () => {
    // A subject's words split at `_`: the id's time part is a word of the follow-up's subject, and the whole id is not.
    const time = t.login.id.slice('tkt_'.length);
    const followUp = await newTicket(admin, { subject: `Follow-up to ${t.login.id}`, status: 'pending' });
    expect(new Set(await ids(`search=${time}`))).toEqual(new Set([t.login.id, followUp.id]));
    expect(await ids(`search=${time}&status=pending`)).toEqual([followUp.id]);
    expect(await ids(`search=${t.login.id}`)).toEqual([t.login.id]);
    // An account written before the id words went unindexed holds items for them, whose filters may be stale: the
    // ticket as stored decides (t.login is open, its old item says new).
    await storeLegacyTicketIdWords({ accountId: acct.accountId, id: t.login.id }, { status: 'new', priority: 'high', assigneeId: agentId });
    expect(await ids(`search=${t.login.id}&status=new`)).toEqual([]);
    expect(new Set(await ids(`search=${t.login.id}&status=open`))).toEqual(new Set([t.login.id]));
    const stale = await admin.get(`${TICKETS}?search=${t.login.id}&status=new&page_size=1`);
    expect(stale.body.meta.hasMore).toBe(false);
  });

  it('follows the requested sort, pages with links.next, and sort_by=updated_at walks the list', async () => {
    const byPriority = await ids('search=printer&sort_by=priority&sort_order=asc');
    expect(byPriority).toEqual([t.printer2.id, t.printer.id]);
    const first = await admin.get(`${TICKETS}?search=printer&page_size=1&sort_order=asc`);
    expect(first.body.tickets.map((x: Json) => x.id)).toEqual([t.printer.id]);
    expect(first.body.meta.hasMore).toBe(true);
    const second = await admin.get(first.body.links.next);
    expect(second.body.tickets.map((x: Json) => x.id)).toEqual([t.printer2.id]);
    expect(second.body.links.next).toBeNull();
    expect(new Set(await ids('search=printer&sort_by=updated_at'))).toEqual(new Set([t.printer.id, t.printer2.id]));
  });

  it('follows a change: new words are found, old ones are not, and a deleted ticket is gone', async () => {
    const x = await newTicket(admin, { subject: 'Toaster smoking' });
    expect(await ids('search=toaster')).toEqual([x.id]);
    expect((await admin.put(`${TICKETS}/${x.id}`, { ticket: { subject: 'Kettle smoking', status: 'pending' } })).status).toBe(200);
    expect(await ids('search=toaster')).toEqual([]);
    expect(await ids('search=kettle&status=pending')).toEqual([x.id]);
    expect((await admin.del(`${TICKETS}/${x.id}`)).status).toBe(204);
    expect(await ids('search=kettle')).toEqual([]);
    expect(await ids(`search=${x.id}`)).toEqual([]);
  });

  it('finds a ticket written before the word index once the account is reindexed (admin reindex)', async () => {
    const own = await createTestAccount();
    const owner = as(client, own.ownerKey);
    const old = await ticketRecord(own.accountId, new Date(Date.now() - 86_400_000), { subject: 'Legacy modem' });
    await storeTickets([old]);
    const find = async () => (await owner.get(`${TICKETS}?search=modem`)).body.tickets.map((x: Json) => x.id);
    expect(await find()).toEqual([]);

    const { reindexAccount } = await import('#shared/reindex/service.ts');
    await reindexAccount(own.accountId);

    expect(await find()).toEqual([old.id]);
  });

  it("never finds another account's tickets", async () => {
    const other = await createTestAccount();
    expect((await as(client, other.ownerKey).get(`${TICKETS}?search=printer`)).body.tickets).toEqual([]);
  });

  it('refuses a term over 64 characters', async () => {
    const res = await admin.get(`${TICKETS}?search=${'a'.repeat(65)}`);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });
});
