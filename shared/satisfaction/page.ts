import { COMMENT_MAX } from './limits.ts';
import type { SurveyState } from './service.ts';

/**
 * The survey page's HTML (decisions §24): small, accessible (a language, a
 * title, one heading, labelled controls, a status region) and with nothing
 * from the ticket or the request unescaped. No script, no other origin: the
 * page's Content-Security-Policy allows its own inline style and posting the
 * form to itself only.
 */

export const escapeHtml = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

/** The headers of every answer of the page: no caching, no referrer (the token is in the URL), no framing, no indexing. */
export const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Robots-Tag': 'noindex',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
} as const;

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;line-height:1.5}textarea{width:100%;font:inherit}button,a.choice{font:inherit;padding:.4rem 1rem;margin-right:.5rem}';

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body>
</html>
`;
}

const about = (subject: string) => `<p>About your request <q>${escapeHtml(subject)}</q>.</p>`;

/** The thank-you page after a click (or a comment), with the comment form posting to the same path. */
export function thankYouPage(action: string, state: SurveyState, commented = false): string {
  const score = state.score === 'good' ? 'good' : 'bad';
  return layout(
    'Thank you for your rating',
    `<h1>Thank you for your rating</h1>
${about(state.subject)}
<p role="status" id="rating">You rated our support <strong>${score}</strong>.</p>
${commented ? '<p role="status" id="saved">Your comment was saved.</p>' : ''}
<form method="post" action="${escapeHtml(action)}">
<label for="comment">Anything you would like to add? (optional, up to ${COMMENT_MAX.toLocaleString('en-US')} characters)</label>
<textarea id="comment" name="comment" rows="5" maxlength="${COMMENT_MAX}">${escapeHtml(state.comment ?? '')}</textarea>
<p><button type="submit">Send comment</button></p>
</form>`,
  );
}

/** A good link opened without a score: the two choices. */
export function choicePage(action: string, state: SurveyState): string {
  const link = (score: 'good' | 'bad', text: string) => `<a class="choice" href="${escapeHtml(`${action}?score=${score}`)}">${text}</a>`;
  return layout('How did we do?', `<h1>How did we do?</h1>\n${about(state.subject)}\n<p>${link('good', 'Good, I’m satisfied')} ${link('bad', 'Bad, I’m unsatisfied')}</p>`);
}

/** An answer that records nothing: the link is unknown or expired (404), the score or comment is not one (400), or the service is busy (503). */
export function problemPage(status: number, message: string): string {
  const title = status === 404 ? 'This link does not work' : status === 400 ? 'That did not work' : 'Please try again shortly';
  const detail = status === 404 ? 'The survey link is unknown or has expired (links work for 28 days), or the request it was about no longer exists.' : message;
  return layout(title, `<h1>${title}</h1>\n<p role="alert">${escapeHtml(detail)}</p>`);
}
