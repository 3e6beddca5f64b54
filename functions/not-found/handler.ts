import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { interfaceOf } from '#shared/http/contract.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { NotFoundError } from '#shared/domain/errors.ts';

/** Catch-all for paths no route matches: a JSON 404 in the envelope of the path's interface. */
export async function handler(event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> {
  const mapped = toHttpError(new NotFoundError(`Route ${event.httpMethod} ${event.path}`), interfaceOf(event.path ?? ''));
  return { statusCode: mapped.status, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(mapped.body) };
}
