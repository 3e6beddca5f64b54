import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useGateway, type TestAccount } from '../support/api.ts';
import { outboxItems } from '../support/desk.ts';
import { as, CONTACTS, expectDeskError, MESSAGES, must, newTicket, TICKETS, type Api, type Json } from '../support/helpdesk.ts';
import { usePipeline } from '../support/pipeline.ts';
import { useSmtp } from '../support/smtp.ts';
import { eventually } from '../support/wait.ts';

/**
 * Erasure and a person's data (decisions §23), end to end: a contact who
 * wrote in by mail (with an attachment, a reply, a ticket made through the
 * API, an agent's response to them, audits and search words) is exported,
 * then erased; afterwards every interface is searched for their name and
 * address and finds nothing, and their files are gone from the bucket.
 */
const { client } = useGateway();
const { account, pipeline } = usePipeline(['bulk-jobs']);
const smtp = useSmtp();
const V1 = '/helpdesk/api/v1';

const inbound = (a: TestAccount) => `${a.accountId.toLowerCase()}@${smtp.domain()}`;

async function job(key: Api, id: string): Promise<Json> {
  return eventually(
    async () => {
      const j = must(await key.get(`${V1}/jobs/${id}`), 200, 'job').job;
      return j.status === 'completed' ? j : undefined;
    },
    60_000,
    `job ${id} completed`,
  );
}

/** Every page of an export from the beginning, as one list. */
async function exportAll(key: Api, kind: string): Promise<Json[]> {
  const items: Json[] = [];
  let url = `${V1}/exports/${kind}?start_time=2020-01-01T00:00:00Z`;
  for (;;) {
    const page = must(await key.get(url), 200, `export ${kind}`);
    items.push(...page.items);
    if (page.endOfStream) return items;
    url = `${V1}/exports/${kind}?cursor=${encodeURIComponent(page.cursor)}`;
  }
}

describe('a contact who wrote in by mail', () => {
  it('gets their data, then is erased everywhere: no interface finds their name or address', async () => {
    // Arrange: mail with a file, a reply, an API ticket, an agent's response, a change (audits), words
    const acct = await account();
    const key = as(client, acct.ownerKey);
    const session = as(client, await acct.session(acct.ownerId));
    const tag = randomBytes(4).toString('hex');
    const name = `Erin Q${tag} Vanish`;
    const email = `erin.${tag}@customer.example`;
    const first = `<first.${tag}@customer.example>`;
    const keysBefore = new Set(await smtp.inboundKeys());
    await smtp.transport().sendMail({
      from: `"${name}" <${email}>`,
      to: inbound(acct),
      subject: `Order ${tag} is late`,
      text: `My card is 4111, call me at home. ${name}`,
      messageId: first,
      attachments: [{ filename: 'passport.bin', content: Buffer.from(`passport of ${name}`), contentType: 'application/octet-stream' }],
    });
    await smtp.transport().sendMail({ from: `"${name}" <${email}>`, to: inbound(acct), subject: `Re: Order ${tag} is late`, text: 'Any news?', inReplyTo: first, references: [first] });
    const rawKeys = (await smtp.inboundKeys()).filter((k) => !keysBefore.has(k));
    const byMail = (must(await key.get(`${TICKETS}?search=${encodeURIComponent(email)}`), 200, 'search').tickets as Json[])[0];
    const [request] = must(await session.get(`${MESSAGES}?ticket_id=${byMail.id}`), 200, 'messages').data as Json[];
    const fileUrl = request.attachments[0].url;
    expect((await fetch(fileUrl)).status).toBe(200);
    const response = must(await session.post(MESSAGES, { ticket_id: byMail.id, type: 'response', content: `<p>Hello ${name}, we are on it.</p>` }), 201, 'response').data;
    const byApi = await newTicket(key, { subject: `Second ${tag}`, requesterEmail: email, requesterName: name });
    must(await key.put(`${TICKETS}/${byApi.id}`, { ticket: { priority: 'high' } }), 200, 'change');
    const contact = (must(await key.get(`${CONTACTS}?search=${encodeURIComponent(email)}`), 200, 'contacts').data as Json[])[0];
    expect(contact).toMatchObject({ email, name, ticketCount: 2 });
    const bystander = await newTicket(key, { subject: `Unrelated ${tag}`, requesterEmail: `someone.${tag}@other.example` });

    // A person's data: everything, as one document
    const exportJob = must(await key.post(`${V1}/contacts/${contact.id}/data_export`, {}), 202, 'data export').job;
    expect(exportJob).toMatchObject({ type: 'data_export', status: 'queued' });
    const exported = await job(key, exportJob.id);
    expect(exported.results).toEqual([{ id: contact.id, status: 'ok' }]);
    expect(exported.download.url).toMatch(/^http/);
    const doc: Json = await (await fetch(exported.download.url)).json();
    expect(doc.contact).toMatchObject({ id: contact.id, email, name });
    expect(doc.tickets.map((t: Json) => t.id).sort()).toEqual([byMail.id, byApi.id].sort());
    expect(doc.messages.map((m: Json) => m.id)).toEqual(expect.arrayContaining([request.id, response.id]));

    // Act: erase, with the events it sends kept in the outbox to be read
    await pipeline().stopPublisher();
    const outboxBefore = new Set((await outboxItems(acct.accountId)).map((i) => i.sk));
    const erasure = must(await key.post(`${V1}/contacts/${contact.id}/erase`, {}), 202, 'erase').job;
    expect(erasure).toMatchObject({ type: 'erasure', total: 1 });
    const done = await job(key, erasure.id);
    expect(done).toMatchObject({ succeeded: 1, failed: 0 });
    const events = (await outboxItems(acct.accountId)).filter((i) => !outboxBefore.has(i.sk));
    await pipeline().startPublisher();

    // Assert: the contact is gone, the tickets stay without them
    const needles = [email, name, `Q${tag}`.toLowerCase(), 'passport of'];
    const clean = (what: string, value: unknown) => {
      const text = JSON.stringify(value).toLowerCase();
      for (const n of needles) expect(text, `${what} holds ${n}`).not.toContain(n.toLowerCase());
    };
    expectDeskError(await key.get(`${CONTACTS}/${contact.id}`), 404, 'NOT_FOUND');
    for (const t of [byMail, byApi]) {
      const now = must(await key.get(`${TICKETS}/${t.id}`), 200, 'ticket').ticket;
      expect(now).toMatchObject({ id: t.id, status: t.status, requesterName: 'Erased contact', requesterEmail: null, subject: t.subject });
    }
    const messages = must(await session.get(`${MESSAGES}?ticket_id=${byMail.id}`), 200, 'messages').data as Json[];
    expect(messages.filter((m) => m.type === 'request').map((m) => [m.content, m.textContent, m.attachments])).toEqual([
      ['[erased]', '[erased]', []],
      ['[erased]', '[erased]', []],
    ]);
    expect(messages.find((m) => m.id === response.id).emailDelivery.to).toEqual(['[erased]']);
    expect([403, 404]).toContain((await fetch(fileUrl)).status);
    const keysAfter = new Set(await smtp.inboundKeys());
    expect(rawKeys.length).toBe(2);
    for (const k of rawKeys) expect(keysAfter.has(k), `raw mail ${k}`).toBe(false);

    // No interface finds them
    for (const term of [email, `q${tag}`, tag]) {
      const people = must(await key.get(`${CONTACTS}?search=${encodeURIComponent(term)}`), 200, 'contacts').data as Json[];
      expect(people.filter((c) => c.id === contact.id)).toEqual([]);
      clean(`contact search ${term}`, people);
      const found = must(await key.get(`${TICKETS}?search=${encodeURIComponent(term)}`), 200, 'tickets').tickets as Json[];
      expect(found.map((t) => t.id).filter((id) => id !== bystander.id && id !== byApi.id && id !== byMail.id)).toEqual([]);
      clean(`ticket search ${term}`, found);
    }
    expect(must(await key.get(`${CONTACTS}/by-email/${encodeURIComponent(email)}`), 200, 'by email').data).toBeNull();
    expect(must(await key.get(`${TICKETS}?search=${encodeURIComponent(email)}`), 200, 'search').tickets).toEqual([]);
    clean(
      'messages',
      messages.filter((m) => m.type === 'request'),
    );
    clean('ticket list', must(await key.get(`${TICKETS}?page_size=100`), 200, 'list'));
    clean('audit log', must(await key.get(`${V1}/audits?page_size=100`), 200, 'audits'));
    for (const t of [byMail, byApi]) clean(`audits of ${t.id}`, must(await key.get(`${TICKETS}/${t.id}/audits?page_size=100`), 200, 'audits'));
    // The export holds back the last 10 s of changes until they settle: poll for the contact's tombstone.
    const contacts = await eventually(
      async () => {
        const all = await exportAll(key, 'contacts');
        return all.some((i) => i.id === contact.id && i.deleted) ? all : undefined;
      },
      30_000,
      "the erased contact's tombstone in the export",
    );
    clean('contacts export', contacts);
    const exportedTickets = await exportAll(key, 'tickets');
    for (const t of [byMail, byApi]) expect(exportedTickets.filter((i) => i.id === t.id).at(-1)?.object).toMatchObject({ requesterName: 'Erased contact', requesterEmail: null });
    clean('tickets export', exportedTickets);
    clean('events of the erasure', events);
    clean('the jobs', [done, exported]);
    const erasureAudit = (must(await key.get(`${V1}/audits?resource_type=contact`), 200, 'audits').audits as Json[]).find((a) => a.resource.id === contact.id);
    expect(erasureAudit).toMatchObject({ via: 'erasure', deleted: true, changes: [], actor: { type: 'user', id: acct.ownerId } });

    // Mail later received from the same address makes a new contact (and a new ticket)
    await smtp.transport().sendMail({ from: `"${name}" <${email}>`, to: inbound(acct), subject: 'Back again', text: 'hello', inReplyTo: first, references: [first] });
    const again = (must(await key.get(`${CONTACTS}?search=${encodeURIComponent(email)}`), 200, 'contacts').data as Json[])[0];
    expect(again).toMatchObject({ email, ticketCount: 1 });
    expect(again.id).not.toBe(contact.id);
  }, 180_000);

  it('refuses a contact the account does not have, and agents', async () => {
    const acct = await account();
    const key = as(client, acct.ownerKey);
    expectDeskError(await key.post(`${V1}/contacts/con_nope/erase`, {}), 404, 'NOT_FOUND');
    expectDeskError(await key.post(`${V1}/contacts/con_nope/data_export`, {}), 404, 'NOT_FOUND');
    const agent = await acct.addUser('member');
    expectDeskError(await as(client, agent.key).post(`${V1}/contacts/con_nope/erase`, {}), 403, 'FORBIDDEN');
  });
});
