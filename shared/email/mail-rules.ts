import { CONTROL_CHARACTER } from '../text.ts';

/**
 * The rules of the email channel as pure functions (decisions §17), so each
 * has its table of cases in test/unit/mail-rules.test.ts.
 */

export interface HeaderLike {
  key: string;
  value: string;
}

/**
 * Mail a machine wrote on its own, which no outbound mail may answer (no
 * loops): `Auto-Submitted` other than `no` (RFC 3834), `Precedence: bulk`,
 * `junk` or `list`, or the `X-Autoreply` / `X-Autorespond` headers of
 * vacation responders that predate RFC 3834.
 */
export function isAutomatic(headers: readonly HeaderLike[]): boolean {
  const value = (key: string) => headers.filter((h) => h.key.toLowerCase() === key).map((h) => h.value.trim().toLowerCase());
  if (value('auto-submitted').some((v) => v !== '' && !v.startsWith('no'))) return true;
  if (value('precedence').some((v) => v === 'bulk' || v === 'junk' || v === 'list')) return true;
  return headers.some((h) => ['x-autoreply', 'x-autorespond'].includes(h.key.toLowerCase()));
}

/** The message ids of an `In-Reply-To` or `References` header, in order: each `<…>`, or the bare words of a client that drops the brackets. */
export function messageIds(header: string | undefined | null): string[] {
  if (!header) return [];
  const bracketed = header.match(/<[^<>\s]+>/g);
  if (bracketed) return bracketed;
  return header
    .split(/[\s,]+/)
    .filter((w) => w.includes('@'))
    .map((w) => `<${w}>`);
}

/**
 * The ids a reply may thread on, best first: In-Reply-To (the mail it
 * answers), then References from the newest back to the thread's root. At
 * most `cap`, so a crafted header cannot make a mail read without bound.
 */
export function threadCandidates(inReplyTo: string | undefined | null, references: string | undefined | null, cap = 20): string[] {
  const ids = [...messageIds(inReplyTo), ...messageIds(references).reverse()];
  return [...new Set(ids)].slice(0, cap);
}

/** A header text as a one-line field: control characters out, whitespace collapsed, cut to `max` characters (code points). */
export function oneLine(text: string | null | undefined, max: number): string {
  const clean = (text ?? '').replace(CONTROL_CHARACTER, ' ').replace(/\s+/g, ' ').trim();
  return [...clean].slice(0, max).join('').trim();
}

/** The ticket subject of a new mail: `(no subject)` when it has none. */
export const ticketSubject = (subject: string | null | undefined): string => oneLine(subject, 255) || '(no subject)';

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A text part as HTML: escaped, a paragraph per blank-line-separated block, line breaks kept (decisions §17). */
export function textAsHtml(text: string): string {
  const blocks = text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((b) => b.trim())
    .filter(Boolean);
  return blocks.length ? blocks.map((b) => `<p>${escapeHtml(b).replace(/\n/g, '<br>')}</p>`).join('') : '<p></p>';
}

/** The first message of a follow-up to a closed ticket names the closed one (decisions §17). */
export const followUpNote = (closedTicketId: string) => `<p>Follow-up to closed ticket ${closedTicketId}.</p>`;

/** A file name a message may carry (decisions §14): no path, no control characters, 1-255 characters. */
export function attachmentName(name: string | null | undefined, contentType: string, index: number): string {
  const base = oneLine((name ?? '').replace(/[\\/]/g, '_'), 255);
  if (base) return base;
  const ext = contentType
    .split('/')[1]
    ?.replace(/[^a-z0-9]/gi, '')
    .slice(0, 10);
  return `attachment-${index + 1}${ext ? `.${ext}` : ''}`;
}

/** A subject without the reply and forward prefixes mail clients add (`Re:`, `RE:`, `Fwd:`, `AW:`, `SV:`), so a response adds exactly one. */
export const withoutReplyPrefix = (subject: string) => subject.replace(/^(\s*(re|fwd?|aw|sv|vs)\s*:\s*)+/i, '');
