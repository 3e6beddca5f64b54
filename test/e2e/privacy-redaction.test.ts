import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/api.ts';
import { as, expectDeskError, expectValidation, MESSAGES, must, newTicket, type Api, type Json } from '../support/helpdesk.ts';
import { outboxItems } from '../support/desk.ts';
import { usePipeline } from '../support/pipeline.ts';

/**
 * Redaction (decisions §23): a secret pasted into a message is masked in its
 * content and text, a file is deleted and stays listed without a URL, and the
 * text reaches neither the audit nor an event.
 */
const { client } = useGateway();
const { account } = usePipeline([]);

const SECRET = '4111 1111 1111 1111';
const MASK = '\u2587'.repeat(SECRET.length);

async function attachFile(session: Api, key: Api, ticketId: string, text: string): Promise<Json> {
  const bytes = Buffer.from('passport scan');
  const upload = must(await key.post('/helpdesk/api/uploads', { name: 'passport.txt', size: bytes.length, contentType: 'text/plain' }), 201, 'upload').data;
  const put = await fetch(upload.uploadUrl, { method: upload.uploadMethod, headers: upload.uploadHeaders, body: bytes });
  expect(put.status).toBe(200);
  return must(await session.post(MESSAGES, { ticket_id: ticketId, type: 'note', content: `<p>${text}</p>`, attachments: [{ token: upload.token }] }), 201, 'message').data;
}

describe('POST /messages/{id}/redact', () => {
  it('masks every occurrence of the text, deletes the named files, and audits without the text', async () => {
    // Arrange: a message with the card number twice and a file
    const acct = await account();
    const key = as(client, acct.ownerKey);
    const session = as(client, await acct.session(acct.ownerId));
    const ticket = await newTicket(key);
    const m = await attachFile(session, key, ticket.id, `card ${SECRET}, again: ${SECRET} & done`);
    const oldUrl = m.attachments[0].url;
    expect((await fetch(oldUrl)).status).toBe(200);

    // Act
    const res = await session.post(`${MESSAGES}/${m.id}/redact`, { text: SECRET, attachmentIds: [m.attachments[0].id] });

    // Assert: masked in both fields, the file listed without a url and no longer served
    const redacted = must(res, 200, 'redact').data;
    expect(redacted.content).toBe(`<p>card ${MASK}, again: ${MASK} &amp; done</p>`);
    expect(redacted.textContent).not.toContain(SECRET);
    expect(redacted.textContent).toContain(MASK);
    expect(redacted.attachments).toEqual([{ id: m.attachments[0].id, name: 'passport.txt', size: 13, contentType: 'text/plain', redacted: true }]);
    const again = must(await session.get(`${MESSAGES}/${m.id}`), 200, 'get').data;
    expect(again).toMatchObject({ content: redacted.content, attachments: redacted.attachments });
    expect(must(await key.get(`/helpdesk/api/attachments/${m.attachments[0].id}`), 200, 'attachment').data).toMatchObject({ redacted: true });
    expect([403, 404]).toContain((await fetch(oldUrl)).status);
    const audits = must(await key.get(`/helpdesk/api/v1/tickets/${ticket.id}/audits`), 200, 'audits').audits as Json[];
    const audit = audits.find((a) => a.via === 'redaction');
    expect(audit).toMatchObject({ messageId: m.id, actor: { type: 'user', id: acct.ownerId } });
    expect(JSON.stringify(audits)).not.toContain(SECRET);
    expect(JSON.stringify(await outboxItems(acct.accountId))).not.toContain(MASK);

    // A repeat changes nothing more and answers the same message
    const repeat = must(await session.post(`${MESSAGES}/${m.id}/redact`, { text: SECRET, attachmentIds: [m.attachments[0].id] }), 200, 'repeat').data;
    expect(repeat).toMatchObject({ content: redacted.content, attachments: redacted.attachments });
  });

  it('refuses agents, unknown attachments, an empty body and an unknown message', async () => {
    const acct = await account();
    const key = as(client, acct.ownerKey);
    const session = as(client, await acct.session(acct.ownerId));
    const ticket = await newTicket(key);
    const m = must(await session.post(MESSAGES, { ticket_id: ticket.id, type: 'note', content: 'hello' }), 201, 'message').data;
    expectValidation(await session.post(`${MESSAGES}/${m.id}/redact`, {}), 'text');
    expectValidation(await session.post(`${MESSAGES}/${m.id}/redact`, { attachmentIds: ['att_nope'] }), 'attachmentIds.0');
    expectDeskError(await session.post(`${MESSAGES}/msg_nope/redact`, { text: 'x' }), 404, 'NOT_FOUND');
    const agent = await acct.addUser('member');
    expectDeskError(await as(client, await acct.session(agent.id)).post(`${MESSAGES}/${m.id}/redact`, { text: 'hello' }), 403, 'FORBIDDEN');
  });
});
