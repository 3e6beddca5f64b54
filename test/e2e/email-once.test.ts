import { describe, expect, it } from 'vitest';
import type { EmailPort } from '#shared/email/port.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { outboxItems } from '../support/desk.ts';

const { client } = useGateway();

describe('response emails are sent once per event', () => {
  it('sends once when message.created is handled by several deliveries at the same moment, and again never', async () => {
    // Arrange: a response with send_email, and its message.created event as the consumer receives it.
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const ticket = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Once only', requesterEmail: 'buyer@shop.example' } } });
    const posted = await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.body.ticket.id, type: 'response', content: '<p>Hello</p>' } });
    expect(posted.status).toBe(201);
    const event = (await outboxItems(acct.accountId)).map((i) => i.detail).find((d) => d.event === 'message.created');
    const sent: string[] = [];
    // A send holds its delivery until each of the eight has either answered or reached a send of its own:
    // the duplicates meet the claim while the first email is still being sent.
    let [sending, answered] = [0, 0];
    let release = () => {};
    const allThere = new Promise<void>((resolve) => (release = resolve));
    const arrive = () => sending + answered === 8 && release();
    const port: EmailPort = {
      send: async (e) => {
        sending++;
        arrive();
        await allThere;
        sent.push(e.id);
        return { messageIds: [e.messageId] };
      },
    } as EmailPort;
    const { sendResponseEmail } = await import('#shared/email/service.ts');

    // Act: eight duplicate deliveries at once, then a late redelivery.
    const deliveries = Array.from({ length: 8 }, () => sendResponseEmail(port, acct.accountId, event.data.message));
    const outcomes = await Promise.allSettled(deliveries.map((d) => d.finally(() => (answered++, arrive()))));
    const late = await sendResponseEmail(port, acct.accountId, event.data.message);

    // Assert: one email; the others were skipped or told to come back later (never sent).
    expect(sent).toHaveLength(1);
    expect(outcomes.filter((o) => o.status === 'fulfilled' && o.value === 'sent')).toHaveLength(1);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as Error).name).toBe('EmailInProgressError');
    expect(late).toBe('skipped');
  });

  it('sends after a failed attempt: a send that throws releases its claim', async () => {
    const acct = await createTestAccount();
    const session = await acct.session(acct.ownerId);
    const ticket = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, body: { ticket: { subject: 'Retry me', requesterEmail: 'buyer@shop.example' } } });
    await client.request('POST', '/helpdesk/api/messages', { token: session, body: { ticket_id: ticket.body.ticket.id, type: 'response', content: '<p>Hi</p>' } });
    const event = (await outboxItems(acct.accountId)).map((i) => i.detail).find((d) => d.event === 'message.created');
    const { sendResponseEmail } = await import('#shared/email/service.ts');
    const failing = { send: async () => Promise.reject(new Error('SES throttled')) } as unknown as EmailPort;
    await expect(sendResponseEmail(failing, acct.accountId, event.data.message)).rejects.toThrow('SES throttled');
    const sent: string[] = [];
    expect(await sendResponseEmail({ send: async (e) => (sent.push(e.id), { messageIds: [e.messageId] }) } as EmailPort, acct.accountId, event.data.message)).toBe('sent');
    expect(sent).toHaveLength(1);
  });
});
