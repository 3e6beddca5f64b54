import { bindEntity, conditions } from '../db/entity.ts';
import { satisfactionEntities } from '../db/entities/satisfaction.ts';
import { queryPage, type Key } from '../db/query.ts';
import type { TxWrite } from '../db/transact.ts';
import type { SatisfactionScore } from '../tickets/resource.ts';

/** The satisfaction module's items (shared/db/entities/satisfaction.ts). */

export interface SatisfactionSettingsRecord {
  accountId: string;
  enabled: boolean;
  version: number;
  updatedAt: string;
}
const settings = bindEntity<SatisfactionSettingsRecord>(satisfactionEntities.satisfactionSettings, { fields: ['accountId', 'enabled', 'version', 'updatedAt'] });

export const getSettings = (accountId: string) => settings.get({ accountId }, { consistent: true });

/** The settings' write at the version read (created when there were none). */
export const settingsWrite = (next: SatisfactionSettingsRecord, current: SatisfactionSettingsRecord | null): TxWrite =>
  settings.put(next, current ? conditions.version('version', current.version) : conditions.absent());

export interface SurveyTokenRecord {
  token: string;
  accountId: string;
  ticketId: string;
  createdAt: string;
  /** Epoch ms after which the link no longer works (the TTL deletes the item some time after). */
  validUntil: number;
  /** The table's TTL (epoch seconds). */
  expiresAt: number;
}
const tokens = bindEntity<SurveyTokenRecord>(satisfactionEntities.surveyToken, { fields: ['token', 'accountId', 'ticketId', 'createdAt', 'validUntil', 'expiresAt'] });

export const tokenWrite = (t: SurveyTokenRecord): TxWrite => tokens.put(t, conditions.absent());
export const getToken = (token: string) => tokens.get({ token });

export interface RatingRecord {
  id: string;
  accountId: string;
  ticketId: string;
  score: SatisfactionScore;
  comment: string | null;
  assigneeId: string | null;
  groupId: string | null;
  ratedAt: string;
  version: number;
}
const ratings = bindEntity<RatingRecord>(satisfactionEntities.satisfactionRating, { fields: ['id', 'accountId', 'ticketId', 'score', 'comment', 'assigneeId', 'groupId', 'ratedAt', 'version'] });

export const getRating = (accountId: string, ticketId: string) => ratings.get({ accountId, ticketId }, { consistent: true });

/** The rating's write at the version read (created on the first click). */
export const ratingWrite = (next: RatingRecord, current: RatingRecord | null): TxWrite => ratings.put(next, current ? conditions.version('version', current.version) : conditions.absent());

/** A page of the account's ratings, newest first, rated within [lo, hi] (sort keys `ratedAt#ticketId`), by score when given. */
export async function ratingsPage(accountId: string, score: SatisfactionScore | undefined, range: { lo: string; hi: string }, limit: number, startKey?: Key) {
  const q = score
    ? ratings.query('byScore', { accountId, score }, { forward: false, skBetween: [range.lo, range.hi] })
    : ratings.query('byRated', { accountId }, { forward: false, skBetween: [range.lo, range.hi] });
  const page = await queryPage<Record<string, unknown>>({ ...q, limit, startKey });
  return { items: page.items.map(ratings.fromItem), nextKey: page.nextKey };
}
