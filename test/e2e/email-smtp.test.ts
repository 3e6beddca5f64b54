/**
 * The local SMTP server plays the template's SES receipt rule (decisions §17,
 * local/smtp.ts): it refuses at RCPT TO what the deployed stack would drop, and
 * for a mail it takes it stores the raw bytes under the rule's prefix and
 * invokes the inbound function with SES's receipt event, answering only once
 * the function has returned. Real SMTP, with Nodemailer as the client. What
 * the function makes of the mail is the email channel's own tests' business.
 */
import { describe, expect, it, vi } from 'vitest';
import { newId } from '#shared/ids.ts';
import { InboundEventSchema } from '#shared/email/ses-events.ts';
import { inboundAddress, replyAddress } from '#shared/email/addresses.ts';
import { FunctionError } from '../../local/lambda/runtime.ts';
import { createTestAccount } from '../support/api.ts';
import { useSmtp } from '../support/smtp.ts';

const smtp = useSmtp();

/** A small MIME message as a mail client writes it, with a Message-ID to find it by. */
function rawMail(to: string, subject = 'Printer on fire') {
  const messageId = `<${newId('test')}@customer.example>`;
  const raw = [
    'From: Casey Customer <casey@customer.example>',
    `To: ${to}`,
    `Subject: ${subject}`,
    `Message-ID: ${messageId}`,
    `Date: ${new Date().toUTCString()}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'It is on fire again.',
    '',
  ].join('\r\n');
  return { raw, messageId };
}

/** Send over SMTP and give the server's answer: accepted (the queue id of its 250) or the refusal's code and text. */
async function send(envelope: { from: string; to: string[] }, raw: string): Promise<{ accepted: string[]; rejected: string[]; queuedAs?: string; code?: number; response?: string }> {
  try {
    const info = await smtp.transport().sendMail({ envelope, raw });
    return { accepted: (info.accepted ?? []).map(String), rejected: (info.rejected ?? []).map(String), queuedAs: /queued as (\S+)/.exec(info.response ?? '')?.[1] };
  } catch (err) {
    const e = err as { responseCode?: number; response?: string; rejected?: string[] };
    return { accepted: [], rejected: e.rejected ?? [], code: e.responseCode, response: e.response };
  }
}

describe('the local SMTP server, as the SES receipt rule', () => {
  it("refuses at RCPT TO an address of another domain and one of no account (550 5.1.1), and takes an existing account's address", async () => {
    // Arrange
    const acct = await createTestAccount();
    const domain = smtp.domain();
    expect(domain).toBe('inbound.localhost');
    const inbound = await smtp.inbound();
    const before = inbound.invocations;

    // Act
    const otherDomain = await send({ from: 'casey@customer.example', to: [inboundAddress(acct.accountId, 'elsewhere.example')] }, rawMail('x').raw);
    const noAccount = await send({ from: 'casey@customer.example', to: [inboundAddress(newId('acct'), domain)] }, rawMail('x').raw);
    const notAnAddress = await send({ from: 'casey@customer.example', to: [`support@${domain}`] }, rawMail('x').raw);
    const real = await send({ from: 'casey@customer.example', to: [inboundAddress(acct.accountId, domain)] }, rawMail(inboundAddress(acct.accountId, domain)).raw);

    // Assert
    for (const refused of [otherDomain, noAccount, notAnAddress]) {
      expect(refused.code).toBe(550);
      expect(refused.response).toMatch(/^550 5\.1\.1 /);
    }
    // Nothing refused reached the function; the accepted mail did, once.
    expect(real.accepted).toEqual([inboundAddress(acct.accountId, domain)]);
    expect(real.queuedAs).toMatch(/^[a-z0-9]{20,}$/);
    expect(inbound.invocations - before).toBe(1);
  });

  it('stores the raw message under inbound/<SES message id>, then invokes the function with the receipt event of the accepted recipients', async () => {
    // Arrange
    const acct = await createTestAccount();
    const domain = smtp.domain();
    const plain = inboundAddress(acct.accountId, domain);
    const reply = replyAddress(acct.accountId, 'tok123', domain);
    const { raw, messageId } = rawMail(plain, '=?ISO-8859-1?Q?Caf=E9?=');
    const inbound = await smtp.inbound();
    const invoke = vi.spyOn(inbound, 'invoke');

    try {
      // Act: one recipient of no account among two good ones; the mail goes to the good ones.
      const sent = await send({ from: 'bounces@customer.example', to: [plain, inboundAddress(newId('acct'), domain), reply] }, raw);

      // Assert
      expect(sent.accepted).toEqual([plain, reply]);
      expect(sent.rejected).toHaveLength(1);
      const key = `inbound/${sent.queuedAs}`;
      expect(await smtp.inboundKeys()).toContain(key);
      expect((await smtp.readObject(key)).toString('utf8')).toBe(raw);

      expect(invoke).toHaveBeenCalledTimes(1);
      const event = invoke.mock.calls[0][0] as any;
      // The shared contract of what the function accepts, and AWS's documented shape around it.
      expect(InboundEventSchema.safeParse(event).success).toBe(true);
      const [record] = event.Records;
      expect(record).toMatchObject({ eventSource: 'aws:ses', eventVersion: '1.0' });
      expect(record.ses.mail).toMatchObject({
        messageId: sent.queuedAs,
        source: 'bounces@customer.example',
        destination: [plain, reply],
        headersTruncated: false,
        commonHeaders: { from: ['Casey Customer <casey@customer.example>'], to: [plain], messageId, subject: 'Café' },
      });
      expect(record.ses.mail.headers).toContainEqual({ name: 'Message-ID', value: messageId });
      expect(Date.parse(record.ses.mail.timestamp)).not.toBeNaN();
      expect(record.ses.receipt).toMatchObject({
        recipients: [plain, reply],
        spamVerdict: { status: 'PASS' },
        virusVerdict: { status: 'PASS' },
        spfVerdict: { status: 'PASS' },
        dkimVerdict: { status: 'PASS' },
        dmarcVerdict: { status: 'PASS' },
        action: { type: 'Lambda', invocationType: 'Event', functionArn: expect.stringMatching(/^arn:aws:lambda:us-east-1:000000000000:function:EmailInbound$/) },
      });
    } finally {
      invoke.mockRestore();
    }
  });

  it('answers 451 4.3.0 when the function fails, so the sender tries again and the mail is not lost', async () => {
    // Arrange
    const acct = await createTestAccount();
    const to = inboundAddress(acct.accountId, smtp.domain());
    const { raw } = rawMail(to);
    const inbound = await smtp.inbound();
    const invoke = vi.spyOn(inbound, 'invoke').mockRejectedValueOnce(new FunctionError(inbound.name, 'Error', 'the store is down'));

    try {
      // Act
      const failed = await send({ from: 'casey@customer.example', to: [to] }, raw);
      const retried = await send({ from: 'casey@customer.example', to: [to] }, raw);

      // Assert
      expect(failed.code).toBe(451);
      expect(failed.response).toMatch(/^451 4\.3\.0 /);
      expect(retried.accepted).toEqual([to]);
      expect(invoke).toHaveBeenCalledTimes(2);
      // Each delivery is its own SES message (its own object), as SES would receive the retry.
      expect(invoke.mock.calls[0][0]).not.toEqual(invoke.mock.calls[1][0]);
    } finally {
      invoke.mockRestore();
    }
  });

  it('invokes the inbound function with an SNS notification of the configuration set, as the bounce topic delivers it', async () => {
    // Arrange: a transient bounce marks nothing, whatever the function makes of notifications.
    const event = await smtp.snsEvent({ eventType: 'Bounce', mail: { messageId: 'ses-out-1' }, bounce: { bounceType: 'Transient', bouncedRecipients: [{ emailAddress: 'casey@customer.example' }] } });

    // Act + Assert
    expect(InboundEventSchema.safeParse(event).success).toBe(true);
    await smtp.invokeInbound(event);
  });
});
