import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emailSettings } from './settings.ts';

export interface OutgoingEmail {
  /** Stable id (the message id): the file name locally, a header with SES. */
  id: string;
  to: string[];
  cc: { email: string; name: string | null }[];
  subject: string;
  text: string;
  html: string;
}

/** The email port: SES v2 in a deployed stack, a readable outbox folder locally. */
export interface EmailPort {
  send(email: OutgoingEmail): Promise<void>;
}

/** Local outbox: one JSON file per email under the directory, easy to read and to assert on. */
export function fileOutbox(dir: string): EmailPort {
  return {
    async send(email) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${email.id}.json`), `${JSON.stringify({ ...email, queuedAt: new Date().toISOString() }, null, 2)}\n`);
    },
  };
}

/** UTF-8 bytes per RFC 2047 encoded word: 45 bytes are 60 base64 characters, so a word stays within 75. */
const ENCODED_WORD_BYTES = 45;

/**
 * An address with its display name, as SES v2 accepts it: an ASCII name is
 * quoted (quotes and backslashes escaped), any other name is RFC 2047
 * encoded words (UTF-8, base64), split on character boundaries. Line breaks
 * never reach a header.
 */
export function formatAddress(email: string, name: string | null): string {
  const clean = (name ?? '').replace(/[\r\n]+/g, ' ').trim();
  if (!clean) return email;
  if (/^[\x20-\x7e]*$/.test(clean)) return `"${clean.replace(/[\\"]/g, '\\$&')}" <${email}>`;
  const words: string[] = [];
  let chunk = '';
  for (const ch of clean) {
    if (Buffer.byteLength(chunk + ch) > ENCODED_WORD_BYTES) {
      words.push(chunk);
      chunk = '';
    }
    chunk += ch;
  }
  words.push(chunk);
  return `${words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join(' ')} <${email}>`;
}

/** SES v2, sending from the configured identity (loaded lazily so only the sender's bundle carries the client). */
export function sesEmail(from: string, configurationSet?: string): EmailPort {
  let client: Promise<{ send: (cmd: unknown) => Promise<unknown>; Cmd: new (input: unknown) => unknown }> | undefined;
  return {
    async send(email) {
      client ??= import('@aws-sdk/client-sesv2').then((m) => ({ send: (c: unknown) => new m.SESv2Client({}).send(c as never), Cmd: m.SendEmailCommand as never }));
      const { send, Cmd } = await client;
      await send(
        new Cmd({
          FromEmailAddress: from,
          ConfigurationSetName: configurationSet,
          Destination: { ToAddresses: email.to, CcAddresses: email.cc.map((c) => formatAddress(c.email, c.name)) },
          Content: {
            Simple: { Subject: { Data: email.subject }, Body: { Text: { Data: email.text }, Html: { Data: email.html } }, Headers: [{ Name: 'X-Support-Desk-Message-Id', Value: email.id }] },
          },
        }),
      );
    },
  };
}

/** The port chosen by configuration: EMAIL_TRANSPORT=ses (EMAIL_FROM) or file (EMAIL_OUTBOX_DIR). */
export function configuredEmailPort(): EmailPort {
  const { EMAIL_TRANSPORT, EMAIL_FROM, SES_CONFIGURATION_SET, EMAIL_OUTBOX_DIR } = emailSettings();
  // The settings' own rules guarantee the address or folder of the chosen transport.
  return EMAIL_TRANSPORT === 'ses' ? sesEmail(EMAIL_FROM!, SES_CONFIGURATION_SET) : fileOutbox(EMAIL_OUTBOX_DIR!);
}
