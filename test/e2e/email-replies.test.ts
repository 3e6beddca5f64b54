import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { useSmtp } from '../support/smtp.ts';

/**
 * What a reply by mail shows (decisions §24): real replies (test/fixtures/replies, from public corpora) sent over
 * SMTP to a ticket's thread keep only the new text; a first mail keeps its whole text; the raw mail stays readable
 * as received (GET /messages/:id/raw, agent or above, session token).
 */
const { client, url } = useGateway();
const account = createTestAccount;
const smtp = useSmtp();

let seq = 0;
const mailId = () => `<r${Date.now()}.${seq++}@customer.example>`;
const inbound = (a: TestAccount) => `${a.accountId.toLowerCase()}@${smtp.domain()}`;
const fixture = (name: string) => readFileSync(join(import.meta.dirname, '..', 'fixtures', 'replies', name), 'latin1');

/** A fixture as a reply to `inReplyTo`: its own Message-ID, In-Reply-To and References replaced, the rest as the client wrote it. */
const asReply = (raw: string, inReplyTo: string, id: string) =>
  `Message-ID: ${id}\r\nIn-Reply-To: ${inReplyTo}\r\nReferences: ${inReplyTo}\r\n` + raw.replace(/^(Message-Id|In-Reply-To|References):.*\n(?:[ \t].*\n)*/gim, '').replace(/\r?\n/g, '\r\n');

async function messagesOf(a: TestAccount, ticketId: string) {
  const res = await client.request('GET', `/helpdesk/api/messages?ticket_id=${ticketId}&sort_order=asc`, { token: await a.session(a.ownerId) });
  expect(res.status).toBe(200);
  return res.body.data as Record<string, any>[];
}

describe('replies by mail', () => {
  it('show only the new text of Gmail-, Outlook-, Apple Mail-, Thunderbird- and iPhone-written replies; the first mail stays whole; the raw mail is as received', { timeout: 60_000 }, async () => {
    // Arrange: a ticket opened by a first mail whose text looks like a quote (a first mail is never trimmed).
    const a = await account();
    const first = mailId();
    const firstText = 'My printer jams.\n\nOn Monday it worked:\n> a line I pasted\n\n-- \nDana';
    await smtp.transport().sendMail({ from: 'dana@customer.example', to: inbound(a), subject: 'Printer', text: firstText, messageId: first });
    const ticketId = (await client.request('GET', '/helpdesk/api/v1/tickets', { token: a.ownerKey })).body.tickets[0].id as string;

    // Act: each client's reply, threaded by In-Reply-To.
    const replies = ['outlook.eml', 'apple-mail.eml', 'thunderbird.eml', 'iphone.eml'];
    const raws: string[] = [];
    for (const f of replies) {
      const raw = asReply(fixture(f), first, mailId());
      raws.push(raw);
      await smtp.transport().sendMail({ envelope: { from: 'dana@customer.example', to: [inbound(a)] }, raw });
    }
    const gmail = fixture('gmail.txt');
    await smtp.transport().sendMail({ from: 'dana@customer.example', to: inbound(a), subject: 'Re: Printer', text: gmail, inReplyTo: first, messageId: mailId() });

    // Assert
    const all = await messagesOf(a, ticketId);
    expect(all).toHaveLength(6);
    expect(all[0].textContent).toBe(firstText);
    expect(all.slice(1, 5).map((m) => m.textContent)).toEqual(['Hello', 'Hello', 'Hello', 'Hello']);
    expect(all.slice(1, 5).map((m) => m.content)).toEqual(['<p>Hello</p>', '<p>Hello</p>', '<p>Hello</p>', '<p>Hello</p>']);
    expect(all[5].textContent).toMatch(/^Fusce bibendum/);
    expect(all[5].textContent).not.toMatch(/wrote:|^>/m);

    // The raw mail of the Apple Mail reply: as received, quoted history included.
    const session = await a.session(a.ownerId);
    const raw = await fetch(`${url()}/helpdesk/api/messages/${all[2].id}/raw`, { headers: { Authorization: `Bearer ${session}` } });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toBe('message/rfc822');
    const body = await raw.text();
    expect(body).toContain('> Hi there!');
    expect(body).toContain('Mac OS X Mail');
  });

  it('answer the raw mail to agents with a session only; a message not made from mail has none', async () => {
    const a = await account();
    const first = mailId();
    await smtp.transport().sendMail({ from: 'dana@customer.example', to: inbound(a), subject: 'Raw', text: 'Hello raw', messageId: first });
    const ticketId = (await client.request('GET', '/helpdesk/api/v1/tickets', { token: a.ownerKey })).body.tickets[0].id as string;
    const [m] = await messagesOf(a, ticketId);
    const viewer = await a.addUser('viewer');
    const asViewer = await client.request('GET', `/helpdesk/api/messages/${m.id}/raw`, { token: await a.session(viewer.id) });
    expect(asViewer.status).toBe(403);
    expect((await client.request('GET', `/helpdesk/api/messages/${m.id}/raw`, { token: a.ownerKey })).status).toBe(401);
    const session = await a.session(a.ownerId);
    const note = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticketId, type: 'note', content: '<p>internal</p>' } });
    expect(note.status).toBe(201);
    expect((await client.request('GET', `/helpdesk/api/messages/${note.body.data.id}/raw`, { token: session })).status).toBe(404);
  });
});
