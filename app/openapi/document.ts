import * as z from '#shared/zod.ts';
import { errorStatuses, interfaceOf, takesIdempotencyKey, type RouteContract } from '#shared/http/contract.ts';
import { TicketEventPayloadSchemas } from '#shared/tickets/event-payloads.ts';
import { TICKET_EVENT_TYPES, TicketEventDetailSchema } from '#shared/tickets/events.ts';
import { PUBLISHED_EVENTS } from '#app/event-catalog.ts';
import { WEBHOOK_TEST, WebhookTestEventSchema } from '#shared/webhooks/events.ts';
import { allRoutes } from '../registry.ts';

type JsonSchema = Record<string, unknown>;

const PlaybookError = z.meta(z.object({ error: z.object({ code: z.string(), message: z.string(), field: z.describe(z.optional(z.string()), 'The invalid input, for validation errors') }) }), {
  id: 'PlaybookError',
});
const HelpdeskError = z.meta(
  z.object({
    success: z.literal(false),
    error: z.object({ code: z.string(), message: z.string(), details: z.optional(z.array(z.object({ field: z.string(), message: z.string() }))) }),
  }),
  { id: 'HelpdeskError' },
);

const STATUS_TEXT: Record<number, string> = {
  400: 'Malformed request or invalid query parameters',
  401: 'Missing, malformed or refused credentials',
  403: 'Valid credentials, but the role is too low or the API key lacks the scope',
  404: 'Not found',
  409: 'Conflict with current state or an existing record',
  413: 'Body over 1 MiB',
  422: 'Invalid values',
  429: 'Rate limit exceeded (see Retry-After)',
  500: 'Internal error',
  503: 'The data store is throttling or unavailable; retry after Retry-After seconds',
};

/** Response headers (decisions §4, correlation ids), declared once under components.headers. */
const HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed per calendar minute for the account (every authenticated answer)', schema: { type: 'integer', minimum: 1 } },
  'X-RateLimit-Remaining': { description: 'Requests left in the current window', schema: { type: 'integer', minimum: 0 } },
  'X-RateLimit-Reset': { description: 'Unix time (seconds) when the window resets', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer', minimum: 0 } },
  'X-Request-Id': {
    description: "The request's correlation id: the caller's X-Request-Id if it sent a usable one, else a new one. Logs and the events the request caused carry it.",
    schema: { type: 'string' },
  },
};
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
/**
 * The headers of an answer with this status: the correlation id always; the account's rate-limit count once the
 * request was counted (not on 401, nor on a public route, which has no account: the stage throttles it).
 */
function responseHeaders(status: number, counted = true) {
  const names: Array<keyof typeof HEADERS> = ['X-Request-Id'];
  if (counted && status !== 401) names.push('X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset');
  if (status === 429 || status === 503) names.push('Retry-After');
  return Object.fromEntries(names.map((n) => [n, header(n)]));
}

/** Every operation accepts a correlation id (echoed as X-Request-Id). */
const REQUEST_ID_PARAMETER = {
  name: 'X-Request-Id',
  in: 'header',
  required: false,
  description:
    'Optional correlation id (1-128 printable ASCII characters, no spaces); answered back as X-Request-Id and carried by the logs and events of the request. Otherwise (absent or unusable) one is made.',
  schema: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
};

/** GET /health: served by the gateway itself (no function, no credentials); 200 when the stack is ready. */
const HEALTH = {
  get: {
    operationId: 'health',
    summary: 'Health check',
    description: 'No credentials. 200 when the stack is ready to serve requests.',
    tags: ['health'],
    security: [],
    responses: {
      200: {
        description: 'Ready',
        content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } } },
      },
    },
  },
};

/** Convert a zod schema, hoisting named sub-schemas into components and pointing refs there. */
function convert(schema: z.ZodMiniType, io: 'input' | 'output', components: Record<string, JsonSchema>): JsonSchema {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  const defs = (json.$defs ?? {}) as Record<string, JsonSchema>;
  delete json.$defs;
  delete json.$schema;
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = k === '$ref' && typeof v === 'string' ? v.replace('#/$defs/', '#/components/schemas/') : rewrite(v);
      return out;
    }
    return node;
  };
  for (const [name, def] of Object.entries(defs)) components[name] ??= rewrite(def) as JsonSchema;
  const id = z.globalRegistry.get(schema)?.id;
  if (id) {
    components[id] ??= rewrite(json) as JsonSchema;
    return { $ref: `#/components/schemas/${id}` };
  }
  return rewrite(json) as JsonSchema;
}

function parameters(shape: z.ZodMiniObject | undefined, where: 'path' | 'query', components: Record<string, JsonSchema>) {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, s]) => {
    const schema = s as z.ZodMiniType;
    const description = z.metaOf(schema)?.description;
    return {
      name,
      in: where,
      required: where === 'path' || !schema.safeParse(undefined).success,
      schema: convert(schema, 'input', components),
      ...(description ? { description } : {}),
    };
  });
}

/** decisions §3: every create takes an optional Idempotency-Key. */
const IDEMPOTENCY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Optional, 1-255 printable ASCII characters, per account. A repeat with the same key and body within 24 hours answers the first answer again (header Idempotency-Replayed: true) and writes nothing; the same key with a different body is a validation error; a repeat while the first is still running is 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

/** A public page's form posts urlencoded fields as well as JSON. */
const requestContent = (route: RouteContract, schema: unknown) => ({ 'application/json': { schema }, ...(route.public ? { 'application/x-www-form-urlencoded': { schema } } : {}) });

function operation(route: RouteContract, components: Record<string, JsonSchema>) {
  const errorRef = { $ref: `#/components/schemas/${interfaceOf(route.path) === 'playbook' ? 'PlaybookError' : 'HelpdeskError'}` };
  // A public page (decisions §24) takes no credentials and answers HTML pages, errors included.
  const counted = !route.public;
  const html = { 'text/html': { schema: { type: 'string' } } };
  const responses: Record<string, unknown> = {
    [route.success.status]: {
      description: route.success.description,
      headers: responseHeaders(route.success.status, counted),
      ...(route.success.schema ? { content: { 'application/json': { schema: convert(route.success.schema, 'output', components) } } } : route.public ? { content: html } : {}),
    },
  };
  for (const s of errorStatuses(route))
    responses[s] = { description: STATUS_TEXT[s] ?? 'Error', headers: responseHeaders(s, counted), content: route.public ? html : { 'application/json': { schema: errorRef } } };
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.group],
    security: route.public ? [] : route.auth === 'session' ? [{ sessionToken: [] }] : [{ apiKey: [] }, { sessionToken: [] }],
    parameters: [
      ...parameters(route.params, 'path', components),
      ...parameters(route.query, 'query', components),
      ...(takesIdempotencyKey(route) ? [IDEMPOTENCY_PARAMETER] : []),
      REQUEST_ID_PARAMETER,
    ],
    ...(route.body ? { requestBody: { required: true, content: requestContent(route, convert(route.body, 'input', components)) } } : {}),
    responses,
  };
}

/**
 * The OpenAPI 3.1 document, generated from the route contracts' zod schemas: served at /openapi.json, and the source
 * of the API Gateway definition (infra/api-definition.ts). `routes`: the route table (default: app/registry.ts's).
 */
export function openApiDocument(extra: { schemas?: Record<string, JsonSchema>; routes?: readonly RouteContract[] } = {}) {
  const components: Record<string, JsonSchema> = {};
  convert(PlaybookError, 'output', components);
  convert(HelpdeskError, 'output', components);
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of extra.routes ?? allRoutes()) {
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, components);
  }
  // Event schemas (docs/events.md): what webhook receivers get, and the EventBridge detail of every event published
  // on the bus, one per detail-type, from the generator that also fills the schema registry (app/event-catalog.ts).
  convert(TicketEventDetailSchema, 'output', components);
  for (const e of PUBLISHED_EVENTS) convert(e.detail, 'output', components);
  const webhooks: Record<string, unknown> = {};
  for (const type of TICKET_EVENT_TYPES) webhooks[type] = eventOperation(type, convert(TicketEventPayloadSchemas[type], 'output', components));
  webhooks[WEBHOOK_TEST] = eventOperation(
    WEBHOOK_TEST,
    convert(WebhookTestEventSchema, 'output', components),
    'Sent only by POST /helpdesk/api/v1/webhooks/{id}/test, at once, with a fresh webhook-id; signed like every delivery. Never retried: the test call answers what came back.',
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Support Desk API',
      version: '1.0.0',
      description:
        'User management (/playbook/api/v1) and support desk (/helpdesk/api). Authenticate with `Authorization: Bearer <API key or session token>`. ' +
        'Every authenticated response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; limits are per account and calendar minute (free 100, paid 1,000, enterprise 10,000).',
    },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'API key `sk_...` (shown once when created)' },
        sessionToken: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'HS256 session token' },
      },
      schemas: { ...components, ...extra.schemas },
      headers: HEADERS,
    },
    paths: { '/health': HEALTH, ...paths } as Record<string, Record<string, unknown>>,
    webhooks,
  };
}

const SIGNATURE_HEADERS = [
  { name: 'webhook-id', in: 'header', required: true, description: 'The event id (evt_...), the same on every retry and redelivery: deduplicate on it', schema: { type: 'string' } },
  { name: 'webhook-timestamp', in: 'header', required: true, description: 'Unix seconds of this attempt', schema: { type: 'string' } },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}` keyed with the base64-decoded part of signingSecret after `whsec_`. ' +
      'For 24 hours after a rotation (POST /webhooks/{id}/rotate_secret) two signatures, space separated: `v1,<new> v1,<old>`; accept the request when any one verifies with the secret you hold.',
    schema: { type: 'string' },
  },
];

const DELIVERY_RULES =
  'Any 2xx within 10 s acknowledges. Otherwise retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h (up to 20% jitter; a longer Retry-After is honoured); 410 disables the webhook, and so do 10 events in a row that exhausted their retries. See docs/events.md.';

/** An OpenAPI 3.1 `webhooks` entry: the POST a subscribed target receives for one event type. */
function eventOperation(type: string, schema: JsonSchema, description = DELIVERY_RULES) {
  return {
    post: {
      operationId: `event_${type.replace(/\./g, '_')}`,
      summary: `${type} delivered to a webhook`,
      description,
      tags: ['events'],
      // We call the receiver: it authenticates us by the signature headers, not by any of our security schemes.
      security: [],
      parameters: SIGNATURE_HEADERS,
      requestBody: { required: true, content: { 'application/json': { schema } } },
      responses: { '2XX': { description: 'Delivered' }, '410': { description: 'Gone: the webhook is disabled' } },
    },
  };
}
