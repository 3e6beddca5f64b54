import * as z from '#shared/zod.ts';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { inParallel } from '../support/parallel.ts';

// As the deployed stage runs (its authorizer cache, 300 s): the sweep's one token is authorized once, and each of its
// thousand requests costs its route's function only. The authorizer's answer depends on the token alone (functions/authorizer).
const { client } = useGateway({ authorizerCacheTtlSeconds: 300 });

const BODIES = [
  '{',
  '[]',
  'null',
  '"x"',
  '{"a":1}',
  JSON.stringify({ ticket: [], ticketField: 'x', customFieldOption: null, webhook: 1 }),
  JSON.stringify({ ticket: { subject: 'x'.repeat(300_000) } }),
  JSON.stringify({ name: { $gt: '' }, email: ['a'], ticket_id: 1 }),
];
const IDS = ['system_status', '..%2F..', 'a'.repeat(65)];
const BAD_QUERY = '?page_size=abc&limit=-1&page=0&after=zz&cursor=zz&sort_by=x&active=maybe&ticket_id=';

describe('bad input on every route of the route table', () => {
  it('never answers 5xx, always JSON', async () => {
    const acct = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    const cases: Array<{ method: string; url: string; rawBody?: string; public?: boolean }> = [];
    // Every route with each odd id; bad bodies with one id (body checks come after the id is parsed); bad queries where there is a query.
    // A route without ids is the same request for each id: sent once.
    const sent = new Set<string>();
    for (const route of allRoutes()) {
      IDS.forEach((id, i) => {
        const path = route.path.replace(/\{[^}]+\}/g, encodeURIComponent(id));
        for (const rawBody of route.method === 'GET' || i > 0 ? [undefined] : [undefined, ...BODIES]) {
          for (const query of route.query ? ['', BAD_QUERY] : ['']) {
            const key = `${route.method} ${path + query} ${rawBody ?? ''}`;
            if (sent.has(key)) continue;
            sent.add(key);
            cases.push({ method: route.method, url: path + query, rawBody, public: Boolean(route.public) });
          }
        }
      });
    }
    // A few requests at a time: the sweep is thousands of requests, and each is independent.
    const failures: string[] = [];
    await inParallel(cases, 6, async (c) => {
      const res = await client.request(c.method, c.url, { token, rawBody: c.rawBody });
      const type = String(res.headers.get('content-type') ?? 'application/json');
      // A public page (the survey link) answers its errors as HTML pages, except to a JSON body.
      const wanted = c.public && !c.rawBody ? /html/ : /json/;
      if (res.status >= 500 || !wanted.test(type)) failures.push(`${res.status} ${type} ${c.method} ${c.url} ${String(c.rawBody).slice(0, 40)}`);
    });
    expect(cases.length).toBeGreaterThan(500);
    expect(failures).toEqual([]);
  }, 120_000);
});

/**
 * Characters no name or file name may hold besides the C0/C1 controls (decisions §14, issue 33): bidirectional
 * controls and lone UTF-16 surrogates. The fuzzer's request had both in one upload name and answered 500.
 */
const NAME_BREAKERS: Record<string, string> = {
  "the fuzzer's name (U+202E and a lone surrogate)": 'report\u202E\ud800fdp.exe',
  'U+202E right-to-left override': 'invoice\u202Efdp.exe',
  'a lone high surrogate': 'half \ud83d an emoji',
  'a lone low surrogate': '\ude00 half an emoji',
  'U+200E left-to-right mark': 'a\u200Eb',
  'U+200F right-to-left mark': 'a\u200Fb',
  'U+202A left-to-right embedding': 'a\u202Ab',
  'U+2066 left-to-right isolate': 'a\u2066b',
  'U+2069 pop directional isolate': 'a\u2069b',
  'U+061C Arabic letter mark': 'a\u061Cb',
};

type JsonNode = Record<string, any>;

/** Paths of every name field in a body schema (`name`, `requesterName`, `attachments.0.name`, ...), through wrappers, arrays and refs. */
function nameFields(schema: z.ZodMiniType): string[][] {
  const root = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonNode;
  const found: string[][] = [];
  const walk = (node: JsonNode | undefined, path: string[]) => {
    if (!node || typeof node !== 'object') return;
    if (typeof node.$ref === 'string') return walk(root.$defs?.[node.$ref.replace('#/$defs/', '')], path);
    for (const [key, child] of Object.entries<JsonNode>(node.properties ?? {})) {
      if (/^name$|Name$/.test(key)) found.push([...path, key]);
      walk(child, [...path, key]);
    }
    if (node.items) walk(node.items, [...path, '0']);
    for (const k of ['anyOf', 'oneOf', 'allOf']) for (const s of node[k] ?? []) walk(s, path);
  };
  walk(root, []);
  return found;
}

/** A body holding `value` at `path` (an array where the path has an index) over `base`. */
function bodyWith(path: string[], value: unknown, base: Record<string, unknown> = {}): Record<string, unknown> {
  const build = (rest: string[]): unknown => (rest.length ? (/^\d+$/.test(rest[0]) ? [build(rest.slice(1))] : { [rest[0]]: build(rest.slice(1)) }) : value);
  return { ...base, ...(build(path) as Record<string, unknown>) };
}

/** What a route needs besides the name for the name to be the first (user management reports one field) or only problem. */
const BASES: Record<string, Record<string, unknown>> = { 'POST /playbook/api/v1/users': { email: 'name.sweep@example.com', send_invitation: false } };

describe('names and file names on every route of the route table', () => {
  it('refuse bidirectional controls and lone surrogates, naming the field (422; 400 on user management)', async () => {
    const acct = await createTestAccount();
    const token = await acct.session(acct.ownerId);
    const fields = allRoutes().flatMap((route) => (route.body ? nameFields(route.body).map((path) => ({ route, path })) : []));
    const labels = fields.map(({ route, path }) => `${route.method} ${route.path} ${path.join('.')}`);
    // The sweep finds the names by the body schemas; these must be among them (a missed one would be checked by nothing).
    expect(labels).toEqual(
      expect.arrayContaining([
        'POST /helpdesk/api/uploads name',
        'POST /helpdesk/api/messages attachments.0.name',
        'POST /helpdesk/api/messages ccs.0.name',
        'POST /helpdesk/api/contacts name',
        'PATCH /helpdesk/api/contacts/{contactId} name',
        'POST /helpdesk/api/organizations name',
        'PATCH /helpdesk/api/organizations/{organizationId} name',
        'POST /helpdesk/api/groups name',
        'POST /helpdesk/api/automations name',
        'POST /helpdesk/api/sla-policies name',
        'POST /helpdesk/api/v1/tickets ticket.requesterName',
        'POST /helpdesk/api/v1/webhooks webhook.name',
        'POST /helpdesk/api/v1/ticket_fields/{id}/options customFieldOption.name',
        'POST /playbook/api/v1/users name',
        'PATCH /playbook/api/v1/users/{user_id} name',
      ]),
    );
    const failures: string[] = [];
    const cases = fields.flatMap(({ route, path }) => Object.entries(NAME_BREAKERS).map(([label, value]) => ({ route, path, label, value })));
    // A few requests at a time, as the sweep above: each is independent.
    await inParallel(cases, 6, async ({ route, path, label, value }) => {
      // Ids are well formed but name nothing: the body is checked before anything is looked up.
      const url = route.path.replace(/\{[^}]+\}/g, 'x0sweep');
      const field = (route.wrapper && path[0] === route.wrapper ? path.slice(1) : path).join('.');
      const res = await client.request(route.method, url, { token, body: bodyWith(path, value, BASES[`${route.method} ${route.path}`]) });
      const named = route.path.startsWith('/playbook/')
        ? res.status === 400 && res.body?.error?.code === 'validation_error' && res.body.error.field === field
        : res.status === 422 && res.body?.error?.code === 'VALIDATION_ERROR' && (res.body.error.details ?? []).some((d: { field: string }) => d.field === field);
      if (!named) failures.push(`${route.method} ${url} ${field} with ${label}: ${res.status} ${res.text.slice(0, 160)}`);
    });
    expect(failures).toEqual([]);
  }, 120_000);
});
