import * as z from '../zod.ts';
import { LinksSchema, PageMetaSchema } from '../pagination/cursor-page.ts';
import { SATISFACTION_SCORES } from '../tickets/resource.ts';
import { COMMENT_MAX } from './limits.ts';

export * from './limits.ts';

export const SatisfactionSettingsSchema = z.meta(
  z.object({ enabled: z.describe(z.boolean(), 'When true, a ticket that becomes resolved and has a requester email gets one survey mail ("How did we do?")') }),
  { id: 'SatisfactionSettings' },
);
export type SatisfactionSettings = z.infer<typeof SatisfactionSettingsSchema>;

export const SatisfactionSettingsResponseSchema = z.meta(z.object({ settings: SatisfactionSettingsSchema }), { id: 'SatisfactionSettingsResponse' });

export const UpdateSatisfactionSettingsBodySchema = z.meta(z.object({ settings: z.strictObject({ enabled: z.boolean() }) }), { id: 'UpdateSatisfactionSettingsRequest' });

/** A rating as listed (decisions §24): the assignee and group are the ticket's when it was rated. */
export const SatisfactionRatingSchema = z.meta(
  z.object({
    id: z.describe(z.string(), 'Prefixed csat_: one per ticket; a later click changes it'),
    ticketId: z.string(),
    score: z.enum(SATISFACTION_SCORES),
    comment: z.nullable(z.string()),
    assigneeId: z.describe(z.nullable(z.string()), "The ticket's assignee when it was rated"),
    groupId: z.describe(z.nullable(z.string()), "The ticket's group when it was rated"),
    ratedAt: z.iso.datetime(),
  }),
  { id: 'SatisfactionRating' },
);
export type SatisfactionRating = z.infer<typeof SatisfactionRatingSchema>;

export const SatisfactionRatingListSchema = z.meta(z.object({ ratings: z.array(SatisfactionRatingSchema), meta: PageMetaSchema, links: LinksSchema }), { id: 'SatisfactionRatingList' });

const instant = z.pipe(
  z.iso.datetime({ offset: true }),
  z.transform((v) => new Date(v).toISOString()),
);

export const ListRatingsQuerySchema = z
  .object({
    score: z.optional(z.enum(SATISFACTION_SCORES)),
    since: z.describe(z.optional(instant), 'ISO 8601: rated at or after'),
    until: z.describe(z.optional(instant), 'ISO 8601: rated at or before'),
    page_size: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 25),
    after: z.describe(z.optional(z.string().check(z.minLength(1), z.maxLength(4096))), 'The cursor of links.next'),
  })
  .check(z.refine((q) => !q.since || !q.until || q.since <= q.until, { message: 'since must not be after until', path: ['since'] }));
export type ListRatingsQuery = z.infer<typeof ListRatingsQuerySchema>;

/** The page's token: what newSurveyToken makes (32 lower-case base32 characters); anything else is unknown at once. */
export const SurveyTokenParamsSchema = z.object({ token: z.string().check(z.minLength(1), z.maxLength(64)) });
export const SurveyScoreQuerySchema = z.object({ score: z.describe(z.optional(z.string().check(z.maxLength(16))), 'good or bad; anything else answers the 400 page') });
export const SurveyCommentBodySchema = z.object({ comment: z.string().check(z.maxLength(COMMENT_MAX, `at most ${COMMENT_MAX.toLocaleString('en-US')} characters`)) });
