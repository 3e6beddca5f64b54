import * as z from '../zod.ts';
import { defineRoutes } from '../http/contract.ts';
import {
  ListRatingsQuerySchema,
  SatisfactionRatingListSchema,
  SatisfactionSettingsResponseSchema,
  SurveyCommentBodySchema,
  SurveyScoreQuerySchema,
  SurveyTokenParamsSchema,
  UpdateSatisfactionSettingsBodySchema,
} from './model.ts';

const V1 = '/helpdesk/api/v1';
/** The survey page's own throttle (no usage plan meters a public page): a person clicks a link now and then. */
const SURVEY_THROTTLE = { rateLimit: 20, burstLimit: 50 } as const;

/** The survey link's page (decisions §24): public, outside the API's prefixes. */
export const SURVEY_PATH = '/helpdesk/satisfaction/{token}';

/** Satisfaction ratings (decisions §24): the setting and the list, through the API's authenticated stack. */
export const satisfactionApiRoutes = defineRoutes([
  {
    operationId: 'getSatisfactionSettings',
    method: 'GET',
    path: `${V1}/satisfaction/settings`,
    group: 'satisfaction',
    summary: 'Whether resolved tickets get the survey mail',
    access: 'admin',
    success: { status: 200, description: 'The setting', schema: SatisfactionSettingsResponseSchema },
    errors: [403],
  },
  {
    operationId: 'updateSatisfactionSettings',
    method: 'PUT',
    path: `${V1}/satisfaction/settings`,
    group: 'satisfaction',
    summary: 'Turn the survey mail on or off',
    description: 'When enabled, a ticket that becomes resolved and has a requester email gets one mail asking "How did we do?" with a good and a bad link to the survey page (valid 28 days).',
    access: 'admin',
    body: UpdateSatisfactionSettingsBodySchema,
    wrapper: 'settings',
    success: { status: 200, description: 'The setting as it now is', schema: SatisfactionSettingsResponseSchema },
    errors: [400, 403, 422],
  },
  {
    operationId: 'listSatisfactionRatings',
    method: 'GET',
    path: `${V1}/satisfaction_ratings`,
    group: 'satisfaction',
    summary: "List the account's satisfaction ratings",
    description:
      'Newest first (by when last rated); score, since and until (ISO 8601, inclusive) filter; cursor pages via links.next. assigneeId and groupId are the ticket’s when it was rated. Viewer or above.',
    access: 'viewer',
    query: ListRatingsQuerySchema,
    success: { status: 200, description: 'A page of ratings', schema: SatisfactionRatingListSchema },
    errors: [400, 403],
  },
]);

/** The public survey page (decisions §24): no credentials, HTML answers, served beside the API routes by the same group. */
export const surveyPageRoutes = defineRoutes([
  {
    operationId: 'openSurveyLink',
    method: 'GET',
    path: SURVEY_PATH,
    group: 'satisfaction',
    public: SURVEY_THROTTLE,
    summary: 'The survey link: record good or bad (public HTML page)',
    description:
      'No credentials. score=good|bad records the rating (a later click changes it) and answers a thank-you page (text/html) with a comment form; no score shows the two choices. An unknown or expired token, or one whose ticket was deleted, answers a 404 page; any other score a 400 page.',
    params: SurveyTokenParamsSchema,
    query: SurveyScoreQuerySchema,
    success: { status: 200, description: 'The thank-you page (text/html)' },
    errors: [400, 404],
  },
  {
    operationId: 'commentSurvey',
    method: 'POST',
    path: SURVEY_PATH,
    group: 'satisfaction',
    public: SURVEY_THROTTLE,
    summary: 'The survey page: add a comment (public, form or JSON)',
    description:
      'No credentials. comment (up to 2,000 characters) as application/x-www-form-urlencoded (the page’s form: answers the page) or JSON (answers {"rating": {score, comment}}); JSON may also carry score. Errors as the GET.',
    params: SurveyTokenParamsSchema,
    body: z.extend(SurveyCommentBodySchema, { score: z.optional(z.enum(['good', 'bad'])) }),
    success: { status: 200, description: 'The thank-you page, or the rating as JSON' },
    errors: [400, 404, 413],
  },
]);

export const satisfactionRoutes = [...satisfactionApiRoutes, ...surveyPageRoutes] as const;
