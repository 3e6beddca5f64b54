import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import { httpGroup } from '#shared/http/middleware.ts';
import { nextLink } from '#shared/http/links.ts';
import { satisfactionApiRoutes, SURVEY_PATH } from '#shared/satisfaction/contract.ts';
import { getSatisfactionSettings, listRatings, updateSatisfactionSettings } from '#shared/satisfaction/service.ts';
import { surveyPage } from './survey-page.ts';

const api = httpGroup(satisfactionApiRoutes, {
  getSatisfactionSettings: async ({ principal }) => ({ settings: await getSatisfactionSettings(principal) }),
  updateSatisfactionSettings: async ({ principal, body }) => ({ settings: await updateSatisfactionSettings(principal, body.settings) }),
  listSatisfactionRatings: async ({ principal, query, event }) => {
    const page = await listRatings(principal, query);
    return { ratings: page.ratings, meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
});

/** The satisfaction group (decisions §24): the setting and the ratings list through the API's stack, the public survey page beside it. */
export const handler = (event: APIGatewayProxyEvent, context: Context): Promise<APIGatewayProxyResult> => (event.resource === SURVEY_PATH ? surveyPage(event) : api(event, context));
