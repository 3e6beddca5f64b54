import * as z from 'zod';
import { LinksSchema, PageMetaSchema } from '../pagination/cursor-page.ts';
import { SATISFACTION_SCORES } from '../tickets/resource.ts';
import { COMMENT_MAX } from './limits.ts';

export * from './limits.ts';

export const SatisfactionSettingsSchema = z
  .object({ enabled: z.boolean().describe('When true, a ticket that becomes resolved and has a requester email gets one survey mail ("How did we do?")') })
  .meta({ id: 'SatisfactionSettings' });
export type SatisfactionSettings = z.infer<typeof SatisfactionSettingsSchema>;

export const SatisfactionSettingsResponseSchema = z.object({ settings: SatisfactionSettingsSchema }).meta({ id: 'SatisfactionSettingsResponse' });

export const UpdateSatisfactionSettingsBodySchema = z.object({ settings: z.object({ enabled: z.boolean() }).strict() }).meta({ id: 'UpdateSatisfactionSettingsRequest' });

/** A rating as listed (decisions §24): the assignee and group are the ticket's when it was rated. */
export const SatisfactionRatingSchema = z
  .object({
    id: z.string().describe('Prefixed csat_: one per ticket; a later click changes it'),
    ticketId: z.string(),
    score: z.enum(SATISFACTION_SCORES),
    comment: z.string().nullable(),
    assigneeId: z.string().nullable().describe("The ticket's assignee when it was rated"),
    groupId: z.string().nullable().describe("The ticket's group when it was rated"),
    ratedAt: z.iso.datetime(),
  })
  .meta({ id: 'SatisfactionRating' });
export type SatisfactionRating = z.infer<typeof SatisfactionRatingSchema>;

export const SatisfactionRatingListSchema = z.object({ ratings: z.array(SatisfactionRatingSchema), meta: PageMetaSchema, links: LinksSchema }).meta({ id: 'SatisfactionRatingList' });

const instant = z.iso.datetime({ offset: true }).transform((v) => new Date(v).toISOString());

export const ListRatingsQuerySchema = z
  .object({
    score: z.enum(SATISFACTION_SCORES).optional(),
    since: instant.optional().describe('ISO 8601: rated at or after'),
    until: instant.optional().describe('ISO 8601: rated at or before'),
    page_size: z.coerce.number().int().min(1).max(100).default(25),
    after: z.string().min(1).max(4096).optional().describe('The cursor of links.next'),
  })
  .refine((q) => !q.since || !q.until || q.since <= q.until, { message: 'since must not be after until', path: ['since'] });
export type ListRatingsQuery = z.infer<typeof ListRatingsQuerySchema>;

/** The page's token: what newSurveyToken makes (32 lower-case base32 characters); anything else is unknown at once. */
export const SurveyTokenParamsSchema = z.object({ token: z.string().min(1).max(64) });
export const SurveyScoreQuerySchema = z.object({ score: z.string().max(16).optional().describe('good or bad; anything else answers the 400 page') });
export const SurveyCommentBodySchema = z.object({ comment: z.string().max(COMMENT_MAX, `at most ${COMMENT_MAX.toLocaleString('en-US')} characters`) });
