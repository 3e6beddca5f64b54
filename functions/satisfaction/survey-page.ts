import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { withRequestScope } from '#shared/db/client.ts';
import { BadRequestError, PayloadTooLargeError, ValidationError } from '#shared/domain/errors.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { MAX_BODY_BYTES, REQUEST_DEADLINE_MS, fieldIssues } from '#shared/http/middleware.ts';
import { correlationIdFrom, logger, withCorrelation } from '#shared/observability.ts';
import { SurveyCommentBodySchema } from '#shared/satisfaction/model.ts';
import { choicePage, PAGE_HEADERS, problemPage, thankYouPage } from '#shared/satisfaction/page.ts';
import { isScore, rate, surveyState } from '#shared/satisfaction/service.ts';

/**
 * The survey link's public page (decisions §24), outside the authenticated
 * middleware stack: no principal, no account rate limit (API Gateway
 * throttles the method itself), HTML answers. GET records the score; POST
 * records a comment from the page's form (urlencoded) or JSON, and a JSON
 * request gets JSON answers in the helpdesk envelope.
 */

const header = (e: APIGatewayProxyEvent, name: string) => Object.entries(e.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1] ?? '';
const wantsJson = (e: APIGatewayProxyEvent) => /application\/json/i.test(header(e, 'content-type')) || (/application\/json/i.test(header(e, 'accept')) && !/text\/html/i.test(header(e, 'accept')));

const htmlAnswer = (status: number, body: string, extra: Record<string, string> = {}): APIGatewayProxyResult => ({ statusCode: status, headers: { ...PAGE_HEADERS, ...extra }, body });

/** The form's or the JSON body's fields, checked: a comment of at most 2,000 characters, and for JSON an optional score. */
function commentInput(e: APIGatewayProxyEvent): { comment: string; score?: 'good' | 'bad' } {
  const raw = e.body ? (e.isBase64Encoded ? Buffer.from(e.body, 'base64') : Buffer.from(e.body, 'utf8')) : Buffer.alloc(0);
  if (raw.length > MAX_BODY_BYTES) throw new PayloadTooLargeError();
  let fields: Record<string, unknown>;
  if (wantsJson(e)) {
    try {
      fields = JSON.parse(raw.toString('utf8') || 'null');
    } catch {
      throw new BadRequestError('Request body is not valid JSON', [{ field: 'body', message: 'malformed JSON' }]);
    }
    if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) throw new BadRequestError('Request body must be a JSON object', [{ field: 'body', message: 'expected a JSON object' }]);
  } else fields = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  const parsed = SurveyCommentBodySchema.safeParse({ comment: fields.comment ?? '' });
  if (!parsed.success) throw new ValidationError('Invalid comment', fieldIssues(parsed.error));
  if (fields.score !== undefined && !isScore(fields.score)) throw new BadRequestError('score must be good or bad', [{ field: 'score', message: 'good or bad' }]);
  return { comment: parsed.data.comment, score: fields.score as 'good' | 'bad' | undefined };
}

async function answer(e: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const token = e.pathParameters?.token ?? '';
  const action = e.path;
  if (e.httpMethod === 'POST') {
    const state = await rate(token, commentInput(e));
    if (wantsJson(e))
      return { statusCode: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }, body: JSON.stringify({ rating: { score: state.score, comment: state.comment } }) };
    return htmlAnswer(200, thankYouPage(action, state, true));
  }
  const score = e.queryStringParameters?.score;
  if (score === undefined || score === '') {
    const state = await surveyState(token);
    return htmlAnswer(200, state.score ? thankYouPage(action, state) : choicePage(action, state));
  }
  if (!isScore(score)) throw new BadRequestError('The link’s score must be good or bad.', [{ field: 'score', message: 'good or bad' }]);
  return htmlAnswer(200, thankYouPage(action, await rate(token, { score })));
}

/** One request of the page: its answer, or the page (or JSON envelope) of what went wrong; never a 5xx for the caller's input. */
export async function surveyPage(e: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const id = correlationIdFrom(header(e, 'x-request-id') || undefined);
  const result = await withCorrelation(id, async () => {
    try {
      return await withRequestScope({ deadline: Date.now() + REQUEST_DEADLINE_MS }, () => answer(e));
    } catch (err) {
      const mapped = toHttpError(err, 'helpdesk');
      if (mapped.status >= 500) logger.error('survey page: unhandled error', { err, method: e.httpMethod });
      if (wantsJson(e)) return { statusCode: mapped.status, headers: { 'Content-Type': 'application/json', ...mapped.headers }, body: JSON.stringify(mapped.body) };
      const message = (mapped.body as { error: { message: string } }).error.message;
      return htmlAnswer(mapped.status, problemPage(mapped.status, message), mapped.headers);
    }
  });
  return { ...result, headers: { ...result.headers, 'X-Request-Id': id } };
}
