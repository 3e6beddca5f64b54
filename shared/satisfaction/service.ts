import { randomBytes } from 'node:crypto';
import { auditWrite, userActor } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite } from '../db/transact.ts';
import { BadRequestError, NotFoundError } from '../domain/errors.ts';
import { newId } from '../ids.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import { findTicket, ticketRatingWrites, type TicketRecord } from '../tickets/service.ts';
import type { SatisfactionScore } from '../tickets/resource.ts';
import { SURVEY_TOKEN_DAYS } from './limits.ts';
import type { ListRatingsQuery, SatisfactionRating, SatisfactionSettings } from './model.ts';
import * as repo from './repository.ts';

/**
 * Satisfaction ratings (decisions §24): the account's setting, the survey
 * link's token, the rating the public page records on the ticket (with
 * ticket.rated and its audit, one transaction), and the list of ratings.
 */

export async function getSatisfactionSettings(p: Pick<Principal, 'accountId'>): Promise<SatisfactionSettings> {
  return { enabled: (await repo.getSettings(p.accountId))?.enabled ?? false };
}

/** Change the setting at the version read; audited as a setting of the account (`satisfaction.enabled`). */
export function updateSatisfactionSettings(p: Principal, input: SatisfactionSettings): Promise<SatisfactionSettings> {
  return retryOnConflict(async () => {
    const current = await repo.getSettings(p.accountId);
    const before = current?.enabled ?? false;
    if (before === input.enabled) return { enabled: before };
    const at = new Date().toISOString();
    const next = { accountId: p.accountId, enabled: input.enabled, version: (current?.version ?? 0) + 1, updatedAt: at };
    await transactWrite([
      repo.settingsWrite(next, current),
      auditWrite({
        accountId: p.accountId,
        resource: { type: 'account', id: p.accountId },
        actor: userActor(p),
        via: 'api',
        changes: [{ field: 'satisfaction.enabled', from: before, to: input.enabled }],
        at,
      }),
    ]);
    return { enabled: input.enabled };
  });
}

export const surveyEnabled = async (accountId: string): Promise<boolean> => (await repo.getSettings(accountId))?.enabled ?? false;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
/** A survey token: 32 lower-case base32 characters, 160 random bits. */
const TOKEN_PATTERN = /^[a-z2-7]{32}$/;
const newSurveyToken = (): string => [...randomBytes(32)].map((b) => BASE32[b % 32]).join('');

/** Make a survey link's token for a ticket, valid SURVEY_TOKEN_DAYS days (its item expires by TTL some time after). */
export async function createSurveyToken(accountId: string, ticketId: string, now = Date.now()): Promise<string> {
  const token = newSurveyToken();
  const validUntil = now + SURVEY_TOKEN_DAYS * 86_400_000;
  await transactWrite([repo.tokenWrite({ token, accountId, ticketId, createdAt: new Date(now).toISOString(), validUntil, expiresAt: Math.ceil(validUntil / 1000) })]);
  return token;
}

/** The link is not (or no longer) good: unknown, expired, or its ticket deleted. One answer for all, so a guess learns nothing. */
export class SurveyLinkNotFoundError extends NotFoundError {
  constructor() {
    super('Survey link');
    this.name = 'SurveyLinkNotFoundError';
  }
}

/** The ticket a token names, if the token is good now. */
async function openToken(token: string): Promise<TicketRecord> {
  if (!TOKEN_PATTERN.test(token)) throw new SurveyLinkNotFoundError();
  const t = await repo.getToken(token);
  if (!t || t.validUntil <= Date.now()) throw new SurveyLinkNotFoundError();
  const ticket = await findTicket(t.accountId, t.ticketId);
  if (!ticket) throw new SurveyLinkNotFoundError();
  return ticket;
}

export const isScore = (s: unknown): s is SatisfactionScore => s === 'good' || s === 'bad';

/** What the survey page shows: the ticket's subject and the rating so far. */
export interface SurveyState {
  subject: string;
  score: SatisfactionScore | null;
  comment: string | null;
}

/** What the page shows for a good link without a score: the ticket's subject and the rating so far. */
export async function surveyState(token: string): Promise<SurveyState> {
  const ticket = await openToken(token);
  const r = ticket.satisfactionRating;
  return { subject: ticket.subject, score: r?.score ?? null, comment: r?.comment ?? null };
}

/**
 * Record a click or a comment from the survey page (decisions §24): the score
 * (a later click changes it) and/or the comment, on the ticket and in the
 * account's ratings, with ticket.rated and an audit, in one transaction. A
 * repeat of what is already recorded writes nothing (a mail scanner opening
 * the link twice makes one event). A comment before any score is refused.
 */
export function rate(token: string, given: { score?: SatisfactionScore; comment?: string }): Promise<SurveyState> {
  return retryOnConflict(async () => {
    const ticket = await openToken(token);
    const current = await repo.getRating(ticket.accountId, ticket.id);
    const score = given.score ?? current?.score;
    if (!score) throw new BadRequestError('Choose good or bad first', [{ field: 'score', message: 'required before a comment' }]);
    const comment = given.comment === undefined ? (current?.comment ?? null) : given.comment.trim() || null;
    if (current && current.score === score && current.comment === comment) return { subject: ticket.subject, score, comment };
    const ratedAt = new Date().toISOString();
    const next: repo.RatingRecord = {
      id: current?.id ?? newId('csat'),
      accountId: ticket.accountId,
      ticketId: ticket.id,
      score,
      comment,
      assigneeId: ticket.assigneeId,
      groupId: ticket.groupId,
      ratedAt,
      version: (current?.version ?? 0) + 1,
    };
    await transactWrite([...ticketRatingWrites(ticket, { score, comment, ratedAt }, toRatingDto(next)), repo.ratingWrite(next, current)]);
    return { subject: ticket.subject, score, comment };
  });
}

const toRatingDto = (r: repo.RatingRecord): SatisfactionRating => ({
  id: r.id,
  ticketId: r.ticketId,
  score: r.score,
  comment: r.comment,
  assigneeId: r.assigneeId,
  groupId: r.groupId,
  ratedAt: r.ratedAt,
});

const LIST = 'satisfaction_ratings';
const END = '\uffff';

/** GET /v1/satisfaction_ratings: newest first, by score and within since/until, a cursor to go on. */
export async function listRatings(p: Principal, q: ListRatingsQuery): Promise<{ ratings: SatisfactionRating[]; next: string | null }> {
  let filter = { score: q.score, since: q.since, until: q.until };
  let startKey: Record<string, string> | undefined;
  if (q.after) {
    const c = await decodeCursor<typeof filter>(q.after, LIST, p.accountId);
    filter = c.query;
    startKey = c.key;
  }
  // A key condition takes no empty string: '0' sorts below every timestamp.
  const range = { lo: filter.since ?? '0', hi: filter.until ? `${filter.until}#${END}` : END };
  const page = await repo.ratingsPage(p.accountId, filter.score, range, q.page_size, startKey as never);
  const next = page.nextKey ? await encodeCursor({ list: LIST, accountId: p.accountId, query: filter, key: page.nextKey as Record<string, string> }) : null;
  return { ratings: page.items.map(toRatingDto), next };
}
