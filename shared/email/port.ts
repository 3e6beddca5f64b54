import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeMime, formatAddress, type MimeMessage } from './mime.ts';
import { emailSettings } from './settings.ts';

export { formatAddress };

export interface OutgoingEmail extends Omit<MimeMessage, 'from'> {
  /** Stable id (a message id, `invite-<userId>`, …): the file name locally. */
  id: string;
  /** The display name of the sender (the account's `fromName`); the address is the port's, the stage's identity. */
  fromName?: string | null;
  /** SES message tags (account, message): a bounce or complaint names the response it is about. */
  tags?: Readonly<Record<string, string>>;
}

/** What the transport did: the Message-ID the mail went out with (SES writes its own). */
export interface SentEmail {
  messageIds: string[];
}

/** The email port: SES v2 in a deployed stack, a folder of `.eml` files locally. */
export interface EmailPort {
  send(email: OutgoingEmail): Promise<SentEmail>;
}

/**
 * Local outbox: one `.eml` file (RFC 5322, every header) per email under the
 * directory, written whole (a temporary name, then renamed) so a reader never
 * sees half a file.
 */
export function fileOutbox(dir: string, from = 'support@localhost'): EmailPort {
  return {
    async send(email) {
      mkdirSync(dir, { recursive: true });
      const file = join(dir, `${email.id}.eml`);
      writeFileSync(`${file}.tmp`, composeMime({ ...email, from: { email: from, name: email.fromName } }));
      renameSync(`${file}.tmp`, file);
      return { messageIds: [email.messageId] };
    },
  };
}

/** The Message-ID SES gives a mail it sends (it replaces the sender's): `<id@email.amazonses.com>` in us-east-1, `<id@<region>.amazonses.com>` elsewhere. */
export const sesMessageId = (id: string, region: string) => `<${id}@${region === 'us-east-1' ? 'email' : region}.amazonses.com>`;

/** SES v2 SendEmail with the raw message, from the stage's identity (the client loaded lazily: only the sender's bundle carries it). */
export function sesEmail(from: string, configurationSet?: string): EmailPort {
  let client: Promise<{ send: (cmd: unknown) => Promise<{ MessageId?: string }>; Cmd: new (input: unknown) => unknown; region: () => Promise<string> }> | undefined;
  return {
    async send(email) {
      client ??= import('@aws-sdk/client-sesv2').then((m) => {
        const ses = new m.SESv2Client({});
        return { send: (c: unknown) => ses.send(c as never) as Promise<{ MessageId?: string }>, Cmd: m.SendEmailCommand as never, region: () => ses.config.region() };
      });
      const { send, Cmd, region } = await client;
      const out = await send(
        new Cmd({
          ConfigurationSetName: configurationSet,
          Content: { Raw: { Data: Buffer.from(composeMime({ ...email, from: { email: from, name: email.fromName } })) } },
          EmailTags: Object.entries(email.tags ?? {}).map(([Name, Value]) => ({ Name, Value: Value.replace(/[^A-Za-z0-9_.@-]/g, '_') })),
        }),
      );
      // Both ids thread: SES's is what the customer's client sees, ours is in References of later mail.
      return { messageIds: [email.messageId, ...(out.MessageId ? [sesMessageId(out.MessageId, await region())] : [])] };
    },
  };
}

/** The address mail is sent from: the stage's EMAIL_FROM, an address or a domain (then `support@` it). */
export const senderAddress = (from: string) => (from.includes('@') ? from : `support@${from}`);

/** The port chosen by configuration: EMAIL_TRANSPORT=ses (EMAIL_FROM) or file (EMAIL_OUTBOX_DIR). */
export function configuredEmailPort(): EmailPort {
  const { EMAIL_TRANSPORT, EMAIL_FROM, SES_CONFIGURATION_SET, EMAIL_OUTBOX_DIR } = emailSettings();
  // The settings' own rules guarantee the address or the folder of the transport chosen.
  return EMAIL_TRANSPORT === 'ses' ? sesEmail(senderAddress(EMAIL_FROM!), SES_CONFIGURATION_SET) : fileOutbox(EMAIL_OUTBOX_DIR!, EMAIL_FROM ? senderAddress(EMAIL_FROM) : undefined);
}
