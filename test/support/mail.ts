import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import PostalMime, { type Email } from 'postal-mime';

/** One mail of the local outbox (DATA_DIR/emails or a test's EMAIL_OUTBOX_DIR): the `.eml` as written, and parsed. */
export interface OutboxMail {
  file: string;
  raw: string;
  mail: Email;
  to: string[];
  cc: { email: string; name: string | null }[];
  subject: string;
  text: string;
  /** A header's value as written (first occurrence), by lower-case name. */
  header(name: string): string | undefined;
}

/** Every `.eml` of an outbox folder, parsed as a mail client would. */
export async function readOutbox(dir: string): Promise<OutboxMail[]> {
  const files = readdirSync(dir).filter((f) => f.endsWith('.eml'));
  return Promise.all(
    files.map(async (file) => {
      const raw = readFileSync(join(dir, file), 'utf8');
      const mail = await PostalMime.parse(raw);
      return {
        file,
        raw,
        mail,
        to: (mail.to ?? []).map((a) => ('address' in a ? (a.address ?? '') : '')),
        cc: (mail.cc ?? []).map((a) => ({ email: 'address' in a ? (a.address ?? '') : '', name: a.name || null })),
        subject: mail.subject ?? '',
        text: (mail.text ?? '').trim(),
        header: (name: string) => mail.headers.find((h) => h.key === name.toLowerCase())?.value,
      };
    }),
  );
}
