import EmailReplyParser from 'email-reply-parser';

/**
 * What a reply by mail says, without what mail clients append (decisions
 * §24): the quoted history ("On … wrote:" and its `>` lines, Outlook's
 * "From: … Sent: …" block), the signature after `-- `, and a forwarded
 * original. The parser is email-reply-parser (a port of GitHub's); it does
 * not know forwarded originals, so the three clients' forward separators
 * are cut here as well. Loaded from its own chunk at the first reply.
 */

const parser = new EmailReplyParser();

/** Gmail's, Thunderbird's and Apple Mail's line above a forwarded original. */
const FORWARDED = /^[ \t]*(?:-{5,}\s*Forwarded message\s*-{5,}|-{5,}\s*Forwarded Message\s*-{5,}|Begin forwarded message:)[ \t]*$/im;

/** The new text of a reply, or null when there is nothing to take away (or taking it away would leave nothing). */
export function replyText(text: string): string | null {
  const forward = FORWARDED.exec(text);
  const before = forward ? text.slice(0, forward.index) : text;
  const kept = parser.parseReply(before).trim();
  const words = (s: string) => s.replace(/\s+/g, ' ').trim();
  if (!kept || words(kept) === words(text)) return null;
  return kept;
}
