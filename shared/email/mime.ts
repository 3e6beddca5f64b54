import { randomBytes } from 'node:crypto';

/**
 * A small RFC 5322 / MIME writer for the mail we send: one text and one HTML
 * alternative, UTF-8, base64 bodies, RFC 2047 encoded words for any header
 * text that is not plain ASCII. The same bytes go to SES (SendEmail, Raw) and
 * to the local outbox as `.eml`, so the thread headers a test reads locally
 * are the ones a customer's mail client gets.
 */

export interface MimeAddress {
  email: string;
  name?: string | null;
}

export interface MimeMessage {
  from: MimeAddress;
  to: readonly MimeAddress[];
  cc?: readonly MimeAddress[];
  replyTo?: MimeAddress;
  subject: string;
  /** With angle brackets, e.g. `<msg_01…@inbound.example.com>`. */
  messageId: string;
  inReplyTo?: string | null;
  references?: readonly string[];
  /** `auto-generated` for notifications the service writes on its own (RFC 3834); responses are a person's. */
  autoSubmitted?: 'auto-generated' | 'auto-replied';
  /** Extra headers, name to value (ASCII values). */
  headers?: Readonly<Record<string, string>>;
  text: string;
  html: string;
  date?: Date;
}

/** UTF-8 bytes per encoded word: 45 bytes are 60 base64 characters, so a word stays within RFC 2047's 75. */
const ENCODED_WORD_BYTES = 45;

/** Header text as-is when it is printable ASCII, otherwise encoded words split on character boundaries. */
export function encodeWords(text: string): string {
  const clean = text.replace(/[\r\n]+/g, ' ');
  if (/^[\x20-\x7e]*$/.test(clean)) return clean;
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
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join(' ');
}

/**
 * An address with its display name: an ASCII name is quoted (quotes and
 * backslashes escaped), any other name is encoded words. Line breaks never
 * reach a header.
 */
export function formatAddress(email: string, name?: string | null): string {
  const clean = (name ?? '').replace(/[\r\n]+/g, ' ').trim();
  if (!clean) return email;
  if (/^[\x20-\x7e]*$/.test(clean)) return `"${clean.replace(/[\\"]/g, '\\$&')}" <${email}>`;
  return `${encodeWords(clean)} <${email}>`;
}

/** Base64 in lines of 76 characters (RFC 2045). */
const base64Lines = (text: string) =>
  (
    Buffer.from(text, 'utf8')
      .toString('base64')
      .match(/.{1,76}/g) ?? []
  ).join('\r\n');

/** A header line folded before 78 characters where it has spaces (RFC 5322 §2.2.3); a long id list folds between ids. */
function header(name: string, value: string): string {
  const words = value.split(' ');
  const lines: string[] = [];
  let line = `${name}:`;
  for (const w of words) {
    if (line.length + 1 + w.length > 78 && line.length > name.length + 1) {
      lines.push(line);
      line = ` ${w}`;
    } else line += ` ${w}`;
  }
  lines.push(line);
  return lines.join('\r\n');
}

/** The whole message, CRLF line ends, ready for SES's Raw content or an `.eml` file. */
export function composeMime(m: MimeMessage): string {
  const boundary = `=_sd_${randomBytes(12).toString('hex')}`;
  const list = (xs: readonly MimeAddress[]) => xs.map((a) => formatAddress(a.email, a.name)).join(', ');
  const lines = [
    header('From', formatAddress(m.from.email, m.from.name)),
    header('To', list(m.to)),
    ...(m.cc?.length ? [header('Cc', list(m.cc))] : []),
    ...(m.replyTo ? [header('Reply-To', formatAddress(m.replyTo.email, m.replyTo.name))] : []),
    header('Subject', encodeWords(m.subject)),
    header('Date', (m.date ?? new Date()).toUTCString().replace('GMT', '+0000')),
    header('Message-ID', m.messageId),
    ...(m.inReplyTo ? [header('In-Reply-To', m.inReplyTo)] : []),
    ...(m.references?.length ? [header('References', m.references.join(' '))] : []),
    ...(m.autoSubmitted ? [header('Auto-Submitted', m.autoSubmitted)] : []),
    ...Object.entries(m.headers ?? {}).map(([k, v]) => header(k, v.replace(/[\r\n]+/g, ' '))),
    'MIME-Version: 1.0',
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(m.text),
    `--${boundary}`,
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(m.html),
    `--${boundary}--`,
    '',
  ];
  return lines.join('\r\n');
}
