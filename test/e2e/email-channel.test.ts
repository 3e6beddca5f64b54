import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { useGateway, type TestAccount } from '../support/api.ts';
import { readOutbox, type OutboxMail } from '../support/mail.ts';
import { usePipeline } from '../support/pipeline.ts';
import { useSmtp } from '../support/smtp.ts';
import { changeTicketInStore } from '../support/store.ts';
import { eventually } from '../support/wait.ts';

/**
 * The email channel end to end (decisions §17): real MIME over SMTP to the
 * local stack's server, which runs the receipt rule's actions (the raw
 * message into the bucket, then the inbound function's bundle), and agents'
 * responses back out as `.eml` files through the email sender.
 */
const outbox = mkdtempSync(join(tmpdir(), 'sd-mail-'));
process.env.EMAIL_OUTBOX_DIR = outbox;
const { client } = useGateway();
const { account, pipeline } = usePipeline(['email-sender']);
const smtp = useSmtp();

const transport = () => smtp.transport();
const inbound = (a: TestAccount) => `${a.accountId.toLowerCase()}@${smtp.domain()}`;
let seq = 0;
const mailId = () => `<t${Date.now()}.${seq++}@customer.example>`;

/** Send a composed mail (Nodemailer's composer) and wait for the server's answer: the function has run when it is 250. */
const send = (mail: Parameters<ReturnType<typeof transport>['sendMail']>[0]) => transport().sendMail(mail);
/** Send raw RFC 5322 bytes as a mail client wrote them. */
const sendRaw = (to: string, raw: string | Buffer, from = 'someone@customer.example') => transport().sendMail({ envelope: { from, to: [to] }, raw });
const fixture = (name: string, values: Record<string, string>) =>
  Object.entries(values).reduce((text, [k, v]) => text.replaceAll(`{{${k}}}`, v), readFileSync(join(import.meta.dirname, '..', 'fixtures', 'mail', name), 'latin1'));

const get = async (a: TestAccount, path: string) => {
  const res = await client.request('GET', path, { token: a.ownerKey });
  expect(res.status).toBe(200);
  return res.body;
};
const tickets = async (a: TestAccount) => (await get(a, '/helpdesk/api/v1/tickets?sort_order=asc')).tickets as Record<string, any>[];
const messages = async (a: TestAccount, ticketId: string) => {
  const session = await a.session(a.ownerId);
  const res = await client.request('GET', `/helpdesk/api/messages?ticket_id=${ticketId}`, { token: session });
  expect(res.status).toBe(200);
  return res.body.data as Record<string, any>[];
};
const respond = async (a: TestAccount, ticketId: string, content: string) => {
  const session = await a.session(a.ownerId);
  const res = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticketId, type: 'response', content } });
  expect(res.status).toBe(201);
  return res.body.data;
};
/** The `.eml` of a response, once the sender wrote it. */
const sentFor = async (messageId: string): Promise<OutboxMail> =>
  (await eventually(async () => (await readOutbox(outbox)).find((m) => m.file === `${messageId}.eml`), 15_000, `the mail of ${messageId}`))!;

/** A new account with one ticket made by a first mail, and that ticket. */
async function ticketByMail(subject = 'My order is late') {
  const a = await account();
  const first = mailId();
  await send({ from: '"Dana Buyer" <dana@customer.example>', to: inbound(a), subject, text: 'Where is order 1234?', messageId: first });
  const [ticket] = await tickets(a);
  return { a, ticket, first };
}

describe('mail to the inbound address', () => {
  it('makes a new ticket with its requester contact and a first request message', async () => {
    const { a, ticket, first } = await ticketByMail();
    expect(ticket).toMatchObject({ subject: 'My order is late', status: 'new', type: 'question', requesterEmail: 'dana@customer.example', requesterName: 'Dana Buyer' });
    const [m] = await messages(a, ticket.id);
    expect(m).toMatchObject({ type: 'request', channel: 'email', textContent: 'Where is order 1234?', content: '<p>Where is order 1234?</p>', emailDelivery: null });
    const contacts = (await get(a, '/helpdesk/api/contacts')).data as Record<string, any>[];
    const dana = contacts.find((c) => c.email === 'dana@customer.example');
    expect(dana).toMatchObject({ name: 'Dana Buyer', ticketCount: 1 });
    expect(m.authorId).toBe(dana!.id);
    const audits = (await get(a, `/helpdesk/api/v1/tickets/${ticket.id}/audits`)).audits as Record<string, any>[];
    expect(audits[0]).toMatchObject({ via: 'email', actor: { type: 'email', id: null }, messageId: m.id });
    expect(first).toBeTruthy();
  });

  it('processes the same Message-ID once, however often it is delivered', async () => {
    const a = await account();
    const id = mailId();
    const mail = { from: 'dup@customer.example', to: inbound(a), subject: 'Twice', text: 'Sent twice', messageId: id };
    await Promise.all([send(mail), send(mail)]);
    await send(mail);
    const list = await tickets(a);
    expect(list).toHaveLength(1);
    expect(await messages(a, list[0].id)).toHaveLength(1);
  });

  it('keeps a subject in another charset, and (no subject) for none', async () => {
    const a = await account();
    const raw = [
      'From: =?ISO-8859-1?Q?Jos=E9_Pe=F1a?= <jose@customer.example>',
      `To: ${inbound(a)}`,
      'Subject: =?ISO-8859-1?Q?Caf=E9_cr=E8me_br=FBl=E9e?=',
      `Message-ID: ${mailId()}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=koi8-r',
      'Content-Transfer-Encoding: 8bit',
      '',
      '',
    ].join('\r\n');
    // "Привет" in KOI8-R.
    await sendRaw(inbound(a), Buffer.concat([Buffer.from(raw, 'latin1'), Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4, 0x0d, 0x0a])]));
    await send({ from: 'blank@customer.example', to: inbound(a), subject: '', text: 'no subject here', messageId: mailId() });
    const [cafe, blank] = await tickets(a);
    expect(cafe).toMatchObject({ subject: 'Café crème brûlée', requesterName: 'José Peña' });
    expect((await messages(a, cafe.id))[0].textContent.trim()).toBe('Привет');
    expect(blank.subject).toBe('(no subject)');
  });

  it('stores an attachment that downloads byte for byte, and sanitizes the HTML part', async () => {
    const a = await account();
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    await send({
      from: 'files@customer.example',
      to: inbound(a),
      subject: 'Invoice',
      text: 'See attached',
      html: '<p>See <b>attached</b></p><script>alert(1)</script>',
      messageId: mailId(),
      attachments: [{ filename: 'invoice.bin', content: bytes, contentType: 'application/octet-stream' }],
    });
    const [ticket] = await tickets(a);
    const [m] = await messages(a, ticket.id);
    expect(m.content).toBe('<p>See <b>attached</b></p>');
    expect(m.attachments).toHaveLength(1);
    expect(m.attachments[0]).toMatchObject({ name: 'invoice.bin', size: bytes.length, contentType: 'application/octet-stream' });
    const download = await fetch(m.attachments[0].url);
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
    const byId = await get(a, `/helpdesk/api/attachments/${m.attachments[0].id}`);
    expect(byId.data.size).toBe(bytes.length);
  });

  it('refuses mail for an address of no account at RCPT TO, and makes nothing', async () => {
    const a = await account();
    const nobody = `acct_${'0'.repeat(26)}@${smtp.domain()}`;
    await expect(send({ from: 'x@customer.example', to: nobody, subject: 'Hello?', text: '?' })).rejects.toMatchObject({ responseCode: 550 });
    await expect(send({ from: 'x@customer.example', to: `${a.accountId.toLowerCase()}@elsewhere.example`, subject: 'Hello?', text: '?' })).rejects.toMatchObject({ responseCode: 550 });
    expect(await tickets(a)).toHaveLength(0);
  });
});

describe('replies thread on the ticket', () => {
  it('by In-Reply-To: a resolved ticket reopens', async () => {
    const { a, ticket, first } = await ticketByMail();
    await changeTicketInStore(a.accountId, ticket.id, { status: 'resolved' });
    await send({ from: 'dana@customer.example', to: inbound(a), subject: 'Re: My order is late', text: 'Still not here', inReplyTo: first, messageId: mailId() });
    expect(await tickets(a)).toHaveLength(1);
    const [, reply] = await messages(a, ticket.id);
    expect(reply).toMatchObject({ type: 'request', channel: 'email', textContent: 'Still not here' });
    expect((await get(a, `/helpdesk/api/v1/tickets/${ticket.id}`)).ticket.status).toBe('open');
  });

  it('by References alone (a client that drops In-Reply-To)', async () => {
    const { a, ticket, first } = await ticketByMail();
    await send({ from: 'dana@customer.example', to: inbound(a), subject: 'Again', text: 'Via references', references: [`<unknown@elsewhere.example>`, first], messageId: mailId() });
    expect(await tickets(a)).toHaveLength(1);
    expect((await messages(a, ticket.id)).map((m) => m.textContent)).toEqual(['Where is order 1234?', 'Via references']);
  });

  it("a response goes out with the thread's headers, and the customer's reply to it lands on the same ticket (and by the reply address alone)", async () => {
    const { a, ticket, first } = await ticketByMail();
    const response = await respond(a, ticket.id, '<p>It ships today.</p>');
    expect(response.emailDelivery).toMatchObject({ status: 'queued', to: ['dana@customer.example'] });
    const out = await sentFor(response.id);
    expect(out.to).toEqual(['dana@customer.example']);
    expect(out.subject).toBe(`Re: My order is late [${ticket.id}]`);
    expect(out.mail.messageId).toBe(`<${response.id}@${smtp.domain()}>`);
    expect(out.mail.inReplyTo).toBe(first);
    expect(out.mail.references).toContain(first);
    const replyTo = out.mail.replyTo![0] as { address: string };
    expect(replyTo.address).toMatch(new RegExp(`^${a.accountId.toLowerCase()}\\+[a-z2-7]{16}@${smtp.domain().replace('.', '\\.')}$`));
    await pipeline().drained();
    expect((await messages(a, ticket.id)).find((m) => m.id === response.id)!.emailDelivery).toMatchObject({ status: 'sent', to: ['dana@customer.example'] });

    // The customer's client answers the .eml it received: In-Reply-To and References name the response.
    await send({
      from: 'dana@customer.example',
      to: replyTo.address,
      subject: out.subject,
      text: 'Great, thanks',
      inReplyTo: out.mail.messageId,
      references: [first, out.mail.messageId!],
      messageId: mailId(),
    });
    // A client that keeps no thread headers at all: the reply address alone.
    await sendRaw(replyTo.address, `From: dana@customer.example\r\nTo: ${replyTo.address}\r\nSubject: one more thing\r\nMessage-ID: ${mailId()}\r\n\r\nAnd the invoice?\r\n`, 'dana@customer.example');
    expect(await tickets(a)).toHaveLength(1);
    expect((await messages(a, ticket.id)).map((m) => m.textContent.trim())).toEqual(['Where is order 1234?', 'It ships today.', 'Great, thanks', 'And the invoice?']);
  });

  it('a reply to a closed ticket starts a follow-up ticket whose first message names it', async () => {
    const { a, ticket, first } = await ticketByMail();
    await changeTicketInStore(a.accountId, ticket.id, { status: 'closed' });
    await send({ from: 'dana@customer.example', to: inbound(a), subject: 'Re: My order is late', text: 'It broke again', inReplyTo: first, messageId: mailId() });
    const list = await tickets(a);
    expect(list).toHaveLength(2);
    const followUp = list.find((t) => t.id !== ticket.id)!;
    expect(followUp).toMatchObject({ status: 'new', requesterEmail: 'dana@customer.example' });
    const [m] = await messages(a, followUp.id);
    expect(m.content).toContain(ticket.id);
    expect(m.textContent).toBe('It broke again');
    expect((await get(a, `/helpdesk/api/v1/tickets/${ticket.id}`)).ticket.status).toBe('closed');
  });

  it('threads the replies of Gmail, Outlook and Apple Mail as they write them', async () => {
    const { a, ticket, first } = await ticketByMail('Parcel');
    await sendRaw(inbound(a), fixture('gmail-reply.eml', { TO: inbound(a), SUBJECT: 'Parcel', MESSAGE_ID: mailId(), IN_REPLY_TO: first, REFERENCES: first }), 'dana.buyer@gmail.example');
    await sendRaw(inbound(a), fixture('outlook-reply.eml', { TO: inbound(a), SUBJECT: 'Parcel', MESSAGE_ID: mailId(), IN_REPLY_TO: first }), 'ola@outlook.example');
    await sendRaw(inbound(a), fixture('apple-mail-inline-image.eml', { TO: inbound(a), SUBJECT: 'Screen', MESSAGE_ID: mailId() }), 'kim@icloud.example');
    const list = await tickets(a);
    expect(list).toHaveLength(2);
    const thread = await messages(a, ticket.id);
    expect(thread.map((m) => m.textContent.split('\n')[0].trim())).toEqual([
      'Where is order 1234?',
      'Thanks, that worked — the parcel arrived.',
      'Hei, pakken kom fram. Takk for hjælpen, blåbærsyltet',
    ]);
    const apple = list.find((t) => t.id !== ticket.id)!;
    expect(apple).toMatchObject({ subject: 'Screen', requesterName: 'Kim Apple' });
    const [photo] = await messages(a, apple.id);
    expect(photo.attachments).toEqual([expect.objectContaining({ name: 'screen.png', contentType: 'image/png', size: 70 })]);
  });
});

describe('no loops', () => {
  it('an auto-reply is recorded and triggers no outbound mail', async () => {
    const { a, ticket, first } = await ticketByMail();
    const before = (await readOutbox(outbox)).length;
    await send({ from: 'dana@customer.example', to: inbound(a), subject: 'Out of office', text: 'I am away', inReplyTo: first, messageId: mailId(), headers: { 'Auto-Submitted': 'auto-replied' } });
    await send({ from: 'list@customer.example', to: inbound(a), subject: 'Newsletter', text: 'News', messageId: mailId(), headers: { Precedence: 'bulk' } });
    await pipeline().drained();
    expect((await messages(a, ticket.id)).map((m) => m.textContent)).toContain('I am away');
    expect(await tickets(a)).toHaveLength(2);
    expect((await readOutbox(outbox)).length).toBe(before);
  });
});

describe('bounces and complaints', () => {
  it('a hard bounce marks the address undeliverable: the response records it, and later responses are saved but not sent', async () => {
    const { a, ticket } = await ticketByMail();
    const first = await respond(a, ticket.id, '<p>First answer</p>');
    await sentFor(first.id);
    await pipeline().drained();
    // SES reports a permanent bounce of that mail, tagged with its account and message.
    await smtp.invokeInbound(
      await smtp.snsEvent({
        eventType: 'Bounce',
        mail: { messageId: 'ses-0001', tags: { account: [a.accountId], message: [first.id] } },
        bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'dana@customer.example', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }] },
      }),
    );
    const bounced = (await messages(a, ticket.id)).find((m) => m.id === first.id)!;
    expect(bounced.emailDelivery).toMatchObject({ status: 'bounced', reason: 'dana@customer.example: smtp; 550 5.1.1 user unknown' });

    const second = await respond(a, ticket.id, '<p>Second answer</p>');
    await pipeline().drained();
    const saved = (await messages(a, ticket.id)).find((m) => m.id === second.id)!;
    expect(saved.emailDelivery).toMatchObject({ status: 'not_sent', skipped: ['dana@customer.example'] });
    expect((await readOutbox(outbox)).some((m) => m.file === `${second.id}.eml`)).toBe(false);
  });

  it('a soft bounce changes nothing', async () => {
    const { a, ticket } = await ticketByMail();
    const first = await respond(a, ticket.id, '<p>Answer</p>');
    await sentFor(first.id);
    await pipeline().drained();
    await smtp.invokeInbound(
      await smtp.snsEvent({
        eventType: 'Bounce',
        mail: { messageId: 'ses-0002', tags: { account: [a.accountId], message: [first.id] } },
        bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'dana@customer.example' }] },
      }),
    );
    const again = await respond(a, ticket.id, '<p>Again</p>');
    await sentFor(again.id);
    expect((await messages(a, ticket.id)).find((m) => m.id === first.id)!.emailDelivery.status).toBe('sent');
  });
});

describe("SES's verdicts", () => {
  it('quarantines spam, a virus and a DMARC failure under a reject policy: kept under quarantine/, never a ticket; a DMARC failure under none is received', async () => {
    // Arrange: the receipt event of a real mail (the SMTP server's, verdicts PASS), to replay with other verdicts.
    const a = await account();
    const inboundFn = await smtp.inbound();
    const invoke = vi.spyOn(inboundFn, 'invoke');
    let receipt: any;
    try {
      await send({ from: 'maybe@spam.example', to: inbound(a), subject: 'Cheap watches', text: 'Buy now', messageId: mailId() });
      receipt = structuredClone(invoke.mock.calls[0][0]);
    } finally {
      invoke.mockRestore();
    }
    const [ticket] = await tickets(a);
    await client.request('DELETE', `/helpdesk/api/v1/tickets/${ticket.id}`, { token: a.ownerKey });
    const b = await account();
    // The same stored mail, for another account, with other verdicts (a quarantined mail records no Message-ID).
    const replay = async (verdicts: Record<string, unknown>) => {
      const event = structuredClone(receipt);
      event.Records[0].ses.receipt = { ...event.Records[0].ses.receipt, ...verdicts, recipients: [inbound(b)] };
      await smtp.invokeInbound(event);
    };

    // Act
    await replay({ spamVerdict: { status: 'FAIL' } });
    await replay({ virusVerdict: { status: 'FAIL' } });
    await replay({ dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'REJECT' });

    // Assert: nothing in the account, the raw mail kept in quarantine.
    expect(await tickets(b)).toHaveLength(0);
    const sesId = receipt.Records[0].ses.mail.messageId;
    expect((await smtp.readObject(`quarantine/${sesId}`)).toString('utf8')).toContain('Subject: Cheap watches');

    // A DMARC failure whose domain asks for nothing is received like any mail.
    await replay({ dmarcVerdict: { status: 'FAIL' }, dmarcPolicy: 'NONE' });
    expect(await tickets(b)).toHaveLength(1);
  });
});

describe('a mail the parser refuses', () => {
  it('is accepted, kept in quarantine and makes nothing, rather than being retried for ever', async () => {
    const a = await account();
    let raw = `From: deep@customer.example\r\nTo: ${inbound(a)}\r\nSubject: Nested\r\nMessage-ID: ${mailId()}\r\nContent-Type: multipart/mixed; boundary=b0\r\n\r\n`;
    for (let i = 0; i < 60; i++) raw += `--b${i}\r\nContent-Type: multipart/mixed; boundary=b${i + 1}\r\n\r\n`;
    const sent = await sendRaw(inbound(a), raw, 'deep@customer.example');
    expect(sent.response).toMatch(/^250 /);
    const response = sent.response!;
    expect(await tickets(a)).toHaveLength(0);
    const sesId = /queued as (\S+)/.exec(response)![1];
    expect((await smtp.readObject(`quarantine/${sesId}`)).toString('utf8')).toContain('Subject: Nested');
  });
});

describe('email settings', () => {
  it('answer the inbound address; PUT changes the fields given, admins only, each change audited', async () => {
    const a = await account();
    const path = '/helpdesk/api/email/settings';
    expect((await get(a, path)).data).toEqual({ inboundAddress: inbound(a), supportAddresses: [], fromName: null });

    const put = (body: unknown, token = a.ownerKey) => client.request('PUT', path, { token, body });
    const changed = await put({ supportAddresses: ['help@shop.example', 'billing@shop.example'], fromName: 'Shop Support' });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toEqual({ inboundAddress: inbound(a), supportAddresses: ['help@shop.example', 'billing@shop.example'], fromName: 'Shop Support' });
    expect((await put({ fromName: null })).body.data).toMatchObject({ supportAddresses: ['help@shop.example', 'billing@shop.example'], fromName: null });

    // Refused, naming the field, and nothing changes.
    const tooMany = await put({ supportAddresses: Array.from({ length: 11 }, (_, i) => `s${i}@shop.example`) });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error.details[0].field).toBe('supportAddresses');
    const looping = await put({ supportAddresses: ['ok@shop.example', `x@${smtp.domain()}`] });
    expect(looping.status).toBe(422);
    expect(looping.body.error.details[0].field).toBe('supportAddresses.1');
    expect((await put({ supportAddresses: ['not an address'] })).status).toBe(422);
    const viewer = await client.request('POST', '/playbook/api/v1/users', {
      token: a.ownerKey,
      body: { email: `viewer.${Date.now()}@shop.example`, name: 'V', role: 'viewer', send_invitation: false },
    });
    const viewerToken = await a.session(viewer.body.id ?? viewer.body.data?.id);
    expect((await client.request('GET', path, { token: viewerToken })).status).toBe(403);
    expect((await get(a, path)).data.supportAddresses).toEqual(['help@shop.example', 'billing@shop.example']);

    const log = (await get(a, `/helpdesk/api/v1/audits?resource_type=account`)).audits as Record<string, any>[];
    const fields = log.flatMap((e) => e.changes.map((c: { field: string }) => c.field));
    expect(fields).toEqual(expect.arrayContaining(['email.supportAddresses', 'email.fromName']));
  });
});
