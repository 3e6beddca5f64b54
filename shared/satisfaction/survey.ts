import type { EmailPort } from '../email/port.ts';
import { sendNoticeOnce } from '../email/service.ts';
import { findTicket } from '../tickets/service.ts';
import { SURVEY_TOKEN_DAYS } from './limits.ts';
import { escapeHtml } from './page.ts';
import { createSurveyToken, surveyEnabled } from './service.ts';
import { surveySettings } from './settings.ts';

/** The survey link of a token and score. */
export const surveyLink = (base: string, token: string, score: 'good' | 'bad') => `${base}/helpdesk/satisfaction/${token}?score=${score}`;

/**
 * The survey mail of a resolved ticket (decisions §24), from its
 * ticket.resolved event: only when the account has the survey on, the ticket
 * is still resolved and has a requester email; once per ticket however often
 * the event is delivered or the ticket resolved again (the marker
 * `survey-<ticket id>`). The token is made when the mail is composed.
 */
export async function sendSurveyEmail(port: EmailPort, accountId: string, ticketId: string): Promise<'sent' | 'skipped'> {
  if (!(await surveyEnabled(accountId))) return 'skipped';
  const ticket = await findTicket(accountId, ticketId);
  if (!ticket || ticket.status !== 'resolved' || !ticket.requesterEmail) return 'skipped';
  const base = surveySettings().PUBLIC_BASE_URL;
  return sendNoticeOnce(port, accountId, `survey-${ticket.id}`, { email: ticket.requesterEmail, name: ticket.requesterName }, async () => {
    const token = await createSurveyToken(accountId, ticket.id);
    const good = surveyLink(base, token, 'good');
    const bad = surveyLink(base, token, 'bad');
    const hello = ticket.requesterName ? `Hello ${ticket.requesterName},` : 'Hello,';
    const text = `${hello}\n\nyour request "${ticket.subject}" [${ticket.id}] was resolved. How did we do?\n\nGood, I'm satisfied: ${good}\nBad, I'm unsatisfied: ${bad}\n\nOne click is enough; the links work for ${SURVEY_TOKEN_DAYS} days.`;
    const html =
      `<p>${escapeHtml(hello)}</p><p>your request “${escapeHtml(ticket.subject)}” [${ticket.id}] was resolved. <strong>How did we do?</strong></p>` +
      `<p><a href="${escapeHtml(good)}">Good, I’m satisfied</a></p><p><a href="${escapeHtml(bad)}">Bad, I’m unsatisfied</a></p>` +
      `<p>One click is enough; the links work for ${SURVEY_TOKEN_DAYS} days.</p>`;
    return { subject: `How did we do? ${ticket.subject} [${ticket.id}]`, text, html };
  });
}
