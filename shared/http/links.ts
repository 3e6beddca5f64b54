import type { APIGatewayProxyEvent } from 'aws-lambda';

/**
 * `links.next` of a v1 list (decisions §5): the request's path with every
 * query parameter it had, and `after` set to the next cursor; null at the end.
 */
export function nextLink(event: APIGatewayProxyEvent, cursor: string | null): string | null {
  if (!cursor) return null;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(event.queryStringParameters ?? {})) if (k !== 'after' && v !== undefined) params.set(k, v);
  params.set('after', cursor);
  return `${event.path}?${params.toString()}`;
}
