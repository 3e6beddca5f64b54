import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { allRoutes } from '#app/registry.ts';
import { interfaceOf, routeKey, takesIdempotencyKey, type RouteContract } from '#shared/http/contract.ts';
import { useReceiver } from '../fixtures/webhook-receiver.ts';
import { uniqueEmail, useGateway, type Response, type TestAccount } from '../support/api.ts';
import { fileSqsEndpoint } from '../support/file-sqs.ts';
import { localLambda, withFaults } from '../support/lambda.ts';
import { accountItems } from '../support/desk.ts';
import { surveyTokenInStore } from '../support/store.ts';
import { usePipeline } from '../support/pipeline.ts';
import { inParallel } from '../support/parallel.ts';
import { eventually } from '../support/wait.ts';

/**
 * decisions §19: what holds while AWS fails. The functions run with faults
 * injected into their SDK calls (DynamoDB throttles, 500s and hangs, PutEvents
 * refusing some entries, SQS and S3 500s); the local bus, queues and gateway
 * stay honest, and so do this file's own fixtures. Every answer must be the
 * request's normal answer or a 503 with Retry-After in the interface's
 * envelope; a write commits whole or not at all; a create retried with its
 * Idempotency-Key makes one record; every committed ticket's ticket.created
 * reaches the bus (the stream publisher or the sweeper), and its webhook
 * delivery ends delivered or dead-lettered.
 */
// `FAULTS=... npx vitest run test/e2e/faults.test.ts` runs the file at other rates (at much higher ones the SDK's retry
// quota runs dry and 503s become the rule: the arrange steps' retries then give up before the assertions).
const FAULTS = process.env.FAULTS || 'dynamodb:throttle:0.1,dynamodb:error:0.05,dynamodb:timeout:0.02,events:partial:0.2,sqs:error:0.05,s3:error:0.1';
withFaults(FAULTS);
// This file's own fixtures (accounts, users, store reads) keep the default 5 s request timeout: their client is made
// here, before the functions' setting below. With 1 s they failed on a loaded machine (three attempts over 1 s each
// while the other worker bundled every function of a fresh clone), which is no fault of the code under test.
await import('#shared/db/client.ts');
// An injected DynamoDB hang lasts exactly the client's request timeout, then the SDK retries (decisions §19): 1 s here
// instead of 5 runs the same paths (timeout, retry, deadline) without waiting 5 s per hang. Handed to the functions by
// the local stack (local/stack.ts FORWARDED), read at their cold start.
process.env.DYNAMODB_REQUEST_TIMEOUT_MS = '1000';
// Consumers retry a failed message at once (not after seconds), so the pipeline settles within the test.
process.env.CONSUMER_RETRY_BASE_SECONDS = '0';
const { client } = useGateway();
const { account, pipeline } = usePipeline(['webhook-fanout', 'webhook-delivery']);
const receiver = useReceiver();

type Json = any;

/**
 * Every answer this file got, judged: its normal answer, an allowed 503, or a violation of decisions §19. Never reset
 * under a running test (the later tests run side by side): each test's "no violation" holds for every answer so far.
 */
const ledger = { normal: 0, unavailable: 0, violations: [] as string[] };

/** A 503 as decisions §19 allows it: Retry-After in whole seconds, and the envelope of the path's interface. */
function allowedUnavailable(res: Response, path: string): boolean {
  const after = Number(res.headers.get('retry-after'));
  if (res.status !== 503 || !Number.isInteger(after) || after < 1) return false;
  // A public page (the survey link, decisions §24) answers a page, not an envelope.
  if (/^text\/html/.test(res.headers.get('content-type') ?? '')) return path.startsWith('/helpdesk/satisfaction/');
  return interfaceOf(path) === 'playbook'
    ? res.body?.error?.code === 'service_unavailable' && typeof res.body.error.message === 'string'
    : res.body?.success === false && res.body.error?.code === 'SERVICE_UNAVAILABLE' && typeof res.body.error.message === 'string';
}

interface Call {
  token: string;
  body?: unknown;
  /** Sent as Idempotency-Key (creates only). */
  key?: string;
}

/** One request, judged: `normal` are the statuses this request answers without faults. */
async function send(method: string, path: string, call: Call, normal: readonly number[]): Promise<Response> {
  const res = await client.request(method, path, { token: call.token, body: call.body, headers: call.key ? { 'Idempotency-Key': call.key } : {} });
  if (normal.includes(res.status)) ledger.normal++;
  else if (allowedUnavailable(res, path)) ledger.unavailable++;
  else ledger.violations.push(`${method} ${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res;
}

/**
 * A client that honours 503 + Retry-After (sooner than it asks, to keep the
 * test short), resending a create with the same Idempotency-Key: every try is
 * judged, and the request must end in its normal answer.
 */
async function settle(method: string, path: string, call: Call, normal: readonly number[], tries = 12): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await send(method, path, call, normal);
    if (res.status !== 503) {
      if (!normal.includes(res.status))
        throw new Error(`${method} ${path}: expected ${normal.join('/')}, got ${res.status} ${res.text.slice(0, 300)} (violations so far: ${JSON.stringify(ledger.violations)})`);
      return res;
    }
    if (attempt >= tries) throw new Error(`${method} ${path}: still 503 after ${tries} tries`);
    await sleep(50 * attempt);
  }
}

/** Create something (arrange step), retried safely with one Idempotency-Key. */
const create = async (path: string, token: string, body: unknown, status = 201): Promise<Json> => (await settle('POST', path, { token, body, key: randomUUID() }, [status])).body;

const H = '/helpdesk/api';
const V1 = `${H}/v1`;
const P = '/playbook/api/v1';

/** The records one round of the sweep works on: fresh ones for each write that consumes its target. */
interface World {
  acct: TestAccount;
  key: string;
  session: string;
  agents: string[];
  webhookPath: string;
  user: string;
  userToDelete: string;
  apiKeyToRevoke: string;
  ticket: Json;
  ticketToDelete: string;
  contact: Json;
  contactToDelete: string;
  org: string;
  orgToDelete: string;
  message: string;
  attachment: string;
  field: string;
  fieldToDelete: string;
  option: string;
  optionToDelete: string;
  automation: string;
  automationToDelete: string;
  group: string;
  groupToDeactivate: string;
  groupToReactivate: string;
  groupToMakeDefault: string;
  groupToDelete: string;
  webhook: string;
  webhookToDelete: string;
  delivery: string;
  policy: string;
  policyToDelete: string;
  job: string;
  view: string;
  viewToDelete: string;
  macro: string;
  macroToDelete: string;
}

const SLA_TARGETS = (n: number) => ({ urgent: n, high: n * 2, normal: n * 4, low: n * 8 });
const slaPolicy = (name: string) => ({ name, timeMode: 'calendarHours', targets: { firstReply: SLA_TARGETS(60), nextReply: SLA_TARGETS(120), resolution: SLA_TARGETS(480) } });
const inactiveAutomation = (name: string) => ({ name, isActive: false, rule: { all: [{ field: 'status', op: 'equals', value: 'new' }], actions: [{ field: 'priority', value: 'high' }] } });

let rounds = 0;

/** Build one round's records through the API, under faults, as a client that retries 503s would. */
async function buildWorld(acct: TestAccount, agents: string[]): Promise<World> {
  const round = ++rounds;
  const key = acct.ownerKey;
  const session = await acct.session(acct.ownerId);
  const tag = `r${round}-${Date.now().toString(36)}`;
  const webhookPath = `/faults-${tag}`;
  const domain = `${tag}.faults.example`;
  // Records that do not need each other are made side by side, as several clients would; a record made from another
  // waits for it. Much of each request is waiting out injected hangs and retries, so the longest chain sets the pace.
  const [
    [hook, webhookToDelete],
    [field, options, fieldToDelete],
    [org, orgToDelete, contact, contactToDelete],
    [automation, automationToDelete, policy, policyToDelete],
    groups,
    [user, userToDelete, apiKeyToRevoke],
  ] = await Promise.all([
    Promise.all([
      (async () => {
        const made = (await create(`${V1}/webhooks`, key, { webhook: { name: `hook ${tag}`, targetUrl: receiver().url(webhookPath), events: ['ticket.created'] } })).webhook;
        receiver().endpoint(webhookPath, made.signingSecret);
        return made;
      })(),
      (async () => (await create(`${V1}/webhooks`, key, { webhook: { name: `gone ${tag}`, targetUrl: receiver().url(`${webhookPath}-gone`), events: ['ticket.deleted'] } })).webhook.id as string)(),
    ]),
    Promise.all([
      (async () => {
        const made = (
          await create(`${V1}/ticket_fields`, key, {
            ticketField: {
              title: `Tier ${tag}`,
              type: 'dropdown',
              options: [
                { name: 'Gold', value: `gold_${round}` },
                { name: 'Silver', value: `silver_${round}` },
              ],
            },
          })
        ).ticketField;
        const opts = (await settle('GET', `${V1}/ticket_fields/${made.id}/options`, { token: key }, [200])).body.customFieldOptions;
        return [made, opts] as const;
      })(),
      (async () => (await create(`${V1}/ticket_fields`, key, { ticketField: { title: `Scratch ${tag}`, type: 'text' } })).ticketField.id as string)(),
    ]).then(([[made, opts], scratch]) => [made, opts, scratch] as const),
    // Each contact after the organization of its domain, which it joins.
    Promise.all([
      (async () => {
        const madeOrg = (await create(`${H}/organizations`, key, { name: `Org ${tag}`, organizationalDomain: domain })).data.id as string;
        return [madeOrg, (await create(`${H}/contacts`, key, { name: 'Ann Customer', email: `ann@${domain}` })).data] as const;
      })(),
      (async () => {
        const goneOrg = (await create(`${H}/organizations`, key, { name: `Gone ${tag}`, organizationalDomain: `gone-${domain}` })).data.id as string;
        return [goneOrg, (await create(`${H}/contacts`, key, { name: 'Bob Gone', email: `bob@gone-${domain}` })).data.id as string] as const;
      })(),
    ]).then(([[madeOrg, madeContact], [goneOrg, goneContact]]) => [madeOrg, goneOrg, madeContact, goneContact] as const),
    Promise.all([
      (async () => (await create(`${H}/automations`, key, inactiveAutomation(`Auto ${tag}`))).data.id as string)(),
      (async () => (await create(`${H}/automations`, key, inactiveAutomation(`Gone ${tag}`))).data.id as string)(),
      (async () => (await create(`${H}/sla-policies`, key, slaPolicy(`SLA ${tag}`))).data.id as string)(),
      (async () => (await create(`${H}/sla-policies`, key, slaPolicy(`Gone ${tag}`))).data.id as string)(),
    ]),
    (async () => {
      // Groups: the first one of an account becomes its default, so the one to delete is never the first.
      const first = (await create(`${H}/groups`, key, { name: `Tier one ${tag}`, distributionMode: 'roundRobin' })).data.id as string;
      const group = async (name: string) => (await create(`${H}/groups`, key, { name })).data.id as string;
      const [, toDeactivate, toReactivate, toMakeDefault, toDelete] = await Promise.all([
        (async () => {
          await create(`${H}/groups/${first}/members/bulk`, key, { userIds: [agents[0], agents[1], agents[2]] });
          await settle('PUT', `${H}/groups/${first}/lead`, { token: key, body: { userId: agents[0] } }, [200]);
        })(),
        group(`Off ${tag}`),
        (async () => {
          const id = await group(`Back ${tag}`);
          await settle('PUT', `${H}/groups/${id}/deactivate`, { token: key }, [200]);
          return id;
        })(),
        group(`Default ${tag}`),
        group(`Gone ${tag}`),
      ]);
      return { group: first, groupToDeactivate: toDeactivate, groupToReactivate: toReactivate, groupToMakeDefault: toMakeDefault, groupToDelete: toDelete };
    })(),
    Promise.all([
      (async () => (await create(`${P}/users`, key, { email: uniqueEmail('faults'), name: 'Faulty Tester', role: 'member', send_invitation: false })).id as string)(),
      (async () => (await create(`${P}/users`, key, { email: uniqueEmail('faults-gone'), name: 'Gone Tester', role: 'viewer', send_invitation: false })).id as string)(),
      (async () => (await create(`${P}/api-keys`, key, { name: `revoke ${tag}` })).id as string)(),
    ]),
  ]);
  const { group, groupToDeactivate, groupToReactivate, groupToMakeDefault, groupToDelete } = groups;

  const ticket = (await create(`${V1}/tickets`, key, { ticket: { subject: `Printer on fire ${tag}`, requesterEmail: contact.email, customFields: [{ id: field.id, value: `gold_${round}` }] } }))
    .ticket;
  // An attachment: upload, the bytes to the presigned URL (the client's own PUT, honest), then a message with the token.
  const bytes = Buffer.from(`attachment of ${tag}`);
  const [ticketToDelete, message, attached, job] = await Promise.all([
    (async () => (await create(`${V1}/tickets`, key, { ticket: { subject: `Delete me ${tag}` } })).ticket.id as string)(),
    (async () => (await create(`${H}/messages`, session, { ticket_id: ticket.id, type: 'note', content: `First note ${tag}` })).data.id as string)(),
    (async () => {
      const upload = (await create(`${H}/uploads`, key, { name: `notes-${tag}.txt`, size: bytes.length, contentType: 'text/plain' })).data;
      const put = await fetch(upload.uploadUrl, { method: upload.uploadMethod, headers: upload.uploadHeaders, body: bytes });
      if (put.status !== 200) throw new Error(`upload PUT: ${put.status} ${await put.text()}`);
      return (await create(`${H}/messages`, session, { ticket_id: ticket.id, type: 'note', content: 'see attached', attachments: [{ token: upload.token }] })).data;
    })(),
    (async () => (await create(`${V1}/tickets/bulk_update`, key, { ids: [ticket.id], ticket: { addTags: ['bulk'] } }, 202)).job.id as string)(),
  ]);

  // A view and a macro of each kind of request (decisions §21, §22), and one of each to delete.
  const view = (title: string) => ({ view: { title, conditions: { all: [{ field: 'status', operator: 'in', value: ['new', 'open'] }] } } });
  const macro = (title: string) => ({
    macro: {
      title,
      actions: [
        { field: 'addTags', value: ['macro'] },
        { field: 'comment', value: { type: 'note', content: 'Hello {{requester.name}}' } },
      ],
    },
  });
  const [viewId, viewToDelete, macroId, macroToDelete] = await Promise.all([
    (async () => (await create(`${V1}/views`, key, view(`View ${tag}`))).view.id as string)(),
    (async () => (await create(`${V1}/views`, key, view(`Gone ${tag}`))).view.id as string)(),
    (async () => (await create(`${V1}/macros`, key, macro(`Macro ${tag}`))).macro.id as string)(),
    (async () => (await create(`${V1}/macros`, key, macro(`Gone ${tag}`))).macro.id as string)(),
  ]);

  // A delivery of the round's webhook (the ticket.created of the ticket above), for redeliver.
  const delivery: string = await eventually(
    async () => {
      const res = await send('GET', `${V1}/webhooks/${hook.id}/deliveries`, { token: key }, [200]);
      return res.status === 200 ? res.body.deliveries?.[0]?.deliveryId : undefined;
    },
    20_000,
    'a delivery of the round webhook',
  );

  return {
    acct,
    key,
    session,
    agents,
    webhookPath,
    user,
    userToDelete,
    apiKeyToRevoke,
    ticket,
    ticketToDelete,
    contact,
    contactToDelete,
    org,
    orgToDelete,
    message,
    attachment: attached.attachments[0].id,
    field: field.id,
    fieldToDelete,
    option: options[0].id,
    optionToDelete: options[1].id,
    automation,
    automationToDelete,
    group,
    groupToDeactivate,
    groupToReactivate,
    groupToMakeDefault,
    groupToDelete,
    webhook: hook.id,
    webhookToDelete,
    delivery,
    policy,
    policyToDelete,
    job,
    view: viewId,
    viewToDelete,
    macro: macroId,
    macroToDelete,
  };
}

/** One valid request of a route, in a world, built when it is sent. */
interface RouteRequest {
  path: string;
  body?: unknown;
  session?: boolean;
  /** Its normal answers, when not the route's success (a message's raw mail: this world's messages came through the API). */
  normal?: readonly number[];
}

/** A valid request for every route of the route table, by `METHOD path` (the sweep fails on a route that has none). */
const REQUESTS: Record<string, (w: World, n: number) => RouteRequest | Promise<RouteRequest>> = {
  [routeKey('GET', `${P}/users`)]: () => ({ path: `${P}/users?limit=5` }),
  [routeKey('GET', `${P}/users/me`)]: () => ({ path: `${P}/users/me` }),
  [routeKey('GET', `${P}/users/{user_id}`)]: (w) => ({ path: `${P}/users/${w.user}` }),
  [routeKey('POST', `${P}/users`)]: () => ({ path: `${P}/users`, body: { email: uniqueEmail('sweep'), name: 'Swept User', role: 'viewer', send_invitation: false } }),
  [routeKey('PATCH', `${P}/users/{user_id}`)]: (w, n) => ({ path: `${P}/users/${w.user}`, body: { name: `Renamed ${n}` } }),
  [routeKey('DELETE', `${P}/users/{user_id}`)]: (w) => ({ path: `${P}/users/${w.userToDelete}` }),
  [routeKey('POST', `${P}/api-keys`)]: (_, n) => ({ path: `${P}/api-keys`, body: { name: `sweep ${n}` } }),
  [routeKey('GET', `${P}/api-keys`)]: () => ({ path: `${P}/api-keys` }),
  [routeKey('DELETE', `${P}/api-keys/{key_id}`)]: (w) => ({ path: `${P}/api-keys/${w.apiKeyToRevoke}` }),

  [routeKey('GET', `${V1}/tickets`)]: () => ({ path: `${V1}/tickets?page_size=10` }),
  [routeKey('GET', `${V1}/tickets/{id}`)]: (w) => ({ path: `${V1}/tickets/${w.ticket.id}` }),
  [routeKey('POST', `${V1}/tickets`)]: (w, n) => ({
    path: `${V1}/tickets`,
    body: { ticket: { subject: `Swept ${n}`, requesterEmail: w.contact.email, customFields: [{ id: w.field, value: w.ticket.customFields[0].value }] } },
  }),
  [routeKey('PUT', `${V1}/tickets/{id}`)]: (w) => ({ path: `${V1}/tickets/${w.ticket.id}`, body: { ticket: { priority: 'high', tags: ['swept'] } } }),
  [routeKey('DELETE', `${V1}/tickets/{id}`)]: (w) => ({ path: `${V1}/tickets/${w.ticketToDelete}` }),
  [routeKey('POST', `${V1}/tickets/bulk_update`)]: (w) => ({ path: `${V1}/tickets/bulk_update`, body: { ids: [w.ticket.id], ticket: { addTags: ['bulk-swept'] } } }),
  [routeKey('POST', `${V1}/tickets/bulk_delete`)]: async (w) => ({
    path: `${V1}/tickets/bulk_delete`,
    body: { ids: [(await create(`${V1}/tickets`, w.key, { ticket: { subject: 'Bulk delete me' } })).ticket.id] },
  }),
  [routeKey('POST', `${V1}/tickets/{id}/merge`)]: async (w) => ({
    path: `${V1}/tickets/${w.ticket.id}/merge`,
    body: { ids: [(await create(`${V1}/tickets`, w.key, { ticket: { subject: 'Merge me' } })).ticket.id] },
  }),
  [routeKey('GET', `${V1}/jobs/{id}`)]: (w) => ({ path: `${V1}/jobs/${w.job}` }),
  [routeKey('POST', `${V1}/contacts/{id}/erase`)]: async (w) => ({
    path: `${V1}/contacts/${(await create(`${H}/contacts`, w.key, { name: 'Erase Me', email: uniqueEmail('erase') })).data.id}/erase`,
    body: {},
  }),
  [routeKey('POST', `${V1}/contacts/{id}/data_export`)]: (w) => ({ path: `${V1}/contacts/${w.contact.id}/data_export`, body: {} }),
  [routeKey('GET', `${V1}/retention`)]: () => ({ path: `${V1}/retention` }),
  [routeKey('PUT', `${V1}/retention`)]: (_, n) => ({ path: `${V1}/retention`, body: { retention: { closedTicketsDeleteAfterDays: 30 + n } } }),
  [routeKey('GET', `${V1}/views`)]: () => ({ path: `${V1}/views` }),
  [routeKey('POST', `${V1}/views`)]: (_, n) => ({
    path: `${V1}/views`,
    body: { view: { title: `Swept ${n}`, conditions: { all: [{ field: 'priority', operator: 'is', value: 'high' }] }, personal: true } },
  }),
  [routeKey('GET', `${V1}/views/count`)]: (w) => ({ path: `${V1}/views/count?ids=${w.view},${w.viewToDelete}` }),
  [routeKey('GET', `${V1}/views/{id}`)]: (w) => ({ path: `${V1}/views/${w.view}` }),
  [routeKey('PUT', `${V1}/views/{id}`)]: (w, n) => ({ path: `${V1}/views/${w.view}`, body: { view: { title: `Renamed ${n}` } } }),
  [routeKey('DELETE', `${V1}/views/{id}`)]: (w) => ({ path: `${V1}/views/${w.viewToDelete}` }),
  [routeKey('GET', `${V1}/views/{id}/count`)]: (w) => ({ path: `${V1}/views/${w.view}/count` }),
  [routeKey('GET', `${V1}/views/{id}/tickets`)]: (w) => ({ path: `${V1}/views/${w.view}/tickets?page_size=5` }),
  [routeKey('GET', `${V1}/macros`)]: () => ({ path: `${V1}/macros` }),
  [routeKey('POST', `${V1}/macros`)]: (_, n) => ({ path: `${V1}/macros`, body: { macro: { title: `Swept ${n}`, actions: [{ field: 'priority', value: 'high' }], personal: true } } }),
  [routeKey('GET', `${V1}/macros/{id}`)]: (w) => ({ path: `${V1}/macros/${w.macro}` }),
  [routeKey('PUT', `${V1}/macros/{id}`)]: (w, n) => ({ path: `${V1}/macros/${w.macro}`, body: { macro: { title: `Renamed ${n}` } } }),
  [routeKey('DELETE', `${V1}/macros/{id}`)]: (w) => ({ path: `${V1}/macros/${w.macroToDelete}` }),
  [routeKey('GET', `${V1}/tickets/{id}/macros/{macroId}/apply`)]: (w) => ({ path: `${V1}/tickets/${w.ticket.id}/macros/${w.macro}/apply` }),
  [routeKey('POST', `${V1}/tickets/{id}/macros/{macroId}/apply`)]: (w) => ({ path: `${V1}/tickets/${w.ticket.id}/macros/${w.macro}/apply` }),

  [routeKey('GET', `${H}/contacts`)]: () => ({ path: `${H}/contacts?limit=10` }),
  [routeKey('GET', `${H}/contacts/by-email/{email}`)]: (w) => ({ path: `${H}/contacts/by-email/${encodeURIComponent(w.contact.email)}` }),
  [routeKey('GET', `${H}/contacts/{contactId}`)]: (w) => ({ path: `${H}/contacts/${w.contact.id}` }),
  [routeKey('POST', `${H}/contacts`)]: () => ({ path: `${H}/contacts`, body: { name: 'Swept Contact', email: uniqueEmail('contact') } }),
  [routeKey('PATCH', `${H}/contacts/{contactId}`)]: (w) => ({ path: `${H}/contacts/${w.contact.id}`, body: { name: 'Ann Renamed' } }),
  [routeKey('DELETE', `${H}/contacts/{contactId}`)]: (w) => ({ path: `${H}/contacts/${w.contactToDelete}` }),

  [routeKey('GET', `${H}/organizations`)]: () => ({ path: `${H}/organizations?limit=10` }),
  [routeKey('GET', `${H}/organizations/{organizationId}`)]: (w) => ({ path: `${H}/organizations/${w.org}` }),
  [routeKey('POST', `${H}/organizations`)]: (_, n) => ({ path: `${H}/organizations`, body: { name: 'Swept Org', organizationalDomain: `swept-${n}-${randomUUID().slice(0, 8)}.example` } }),
  [routeKey('PATCH', `${H}/organizations/{organizationId}`)]: (w) => ({ path: `${H}/organizations/${w.org}`, body: { name: 'Org Renamed' } }),
  [routeKey('POST', `${H}/organizations/{organizationId}/enrich`)]: (w) => ({ path: `${H}/organizations/${w.org}/enrich` }),
  [routeKey('DELETE', `${H}/organizations/{organizationId}`)]: (w) => ({ path: `${H}/organizations/${w.orgToDelete}` }),

  [routeKey('GET', `${H}/messages`)]: (w) => ({ path: `${H}/messages?ticket_id=${w.ticket.id}`, session: true }),
  [routeKey('GET', `${H}/messages/{messageId}`)]: (w) => ({ path: `${H}/messages/${w.message}`, session: true }),
  [routeKey('GET', `${H}/messages/{messageId}/raw`)]: (w) => ({ path: `${H}/messages/${w.message}/raw`, session: true, normal: [404] }),
  [routeKey('POST', `${H}/messages`)]: (w, n) => ({ path: `${H}/messages`, body: { ticket_id: w.ticket.id, type: 'note', content: `Swept note ${n}` }, session: true }),
  [routeKey('POST', `${H}/messages/{messageId}/redact`)]: (w) => ({ path: `${H}/messages/${w.message}/redact`, body: { text: 'First' }, session: true }),
  [routeKey('POST', `${H}/uploads`)]: () => ({ path: `${H}/uploads`, body: { name: 'swept.png', size: 1024, contentType: 'image/png' } }),
  [routeKey('GET', `${H}/attachments/{attachmentId}`)]: (w) => ({ path: `${H}/attachments/${w.attachment}` }),

  [routeKey('GET', `${V1}/ticket_fields`)]: () => ({ path: `${V1}/ticket_fields` }),
  [routeKey('GET', `${V1}/ticket_fields/{id}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}` }),
  [routeKey('POST', `${V1}/ticket_fields`)]: (_, n) => ({ path: `${V1}/ticket_fields`, body: { ticketField: { title: `Swept field ${n} ${randomUUID().slice(0, 6)}`, type: 'text' } } }),
  [routeKey('PUT', `${V1}/ticket_fields/{id}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}`, body: { ticketField: { description: 'Changed under faults' } } }),
  [routeKey('DELETE', `${V1}/ticket_fields/{id}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.fieldToDelete}` }),
  [routeKey('GET', `${V1}/ticket_fields/{id}/options`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}/options` }),
  [routeKey('GET', `${V1}/ticket_fields/{id}/options/{optionId}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}/options/${w.option}` }),
  [routeKey('POST', `${V1}/ticket_fields/{id}/options`)]: (w, n) => ({
    path: `${V1}/ticket_fields/${w.field}/options`,
    body: { customFieldOption: { name: `Bronze ${n}`, value: `bronze_${n}_${randomUUID().slice(0, 6)}` } },
  }),
  [routeKey('PUT', `${V1}/ticket_fields/{id}/options/{optionId}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}/options/${w.option}`, body: { customFieldOption: { name: 'Gold renamed' } } }),
  [routeKey('DELETE', `${V1}/ticket_fields/{id}/options/{optionId}`)]: (w) => ({ path: `${V1}/ticket_fields/${w.field}/options/${w.optionToDelete}` }),

  [routeKey('GET', `${H}/automations`)]: () => ({ path: `${H}/automations` }),
  [routeKey('POST', `${H}/automations`)]: (_, n) => ({ path: `${H}/automations`, body: inactiveAutomation(`Swept ${n}`) }),
  [routeKey('PUT', `${H}/automations/reorder`)]: async (w) => ({
    path: `${H}/automations/reorder`,
    body: { orderedIds: (await settle('GET', `${H}/automations`, { token: w.key }, [200])).body.data.map((a: Json) => a.id).reverse() },
  }),
  [routeKey('POST', `${H}/automations/test`)]: (w) => ({ path: `${H}/automations/test`, body: { ticketId: w.ticket.id } }),
  [routeKey('PUT', `${H}/automations/{automationId}`)]: (w) => ({ path: `${H}/automations/${w.automation}`, body: { name: 'Renamed automation' } }),
  [routeKey('DELETE', `${H}/automations/{automationId}`)]: (w) => ({ path: `${H}/automations/${w.automationToDelete}` }),

  [routeKey('GET', `${H}/groups`)]: () => ({ path: `${H}/groups?limit=10` }),
  [routeKey('POST', `${H}/groups`)]: (_, n) => ({ path: `${H}/groups`, body: { name: `Swept group ${n} ${randomUUID().slice(0, 6)}` } }),
  [routeKey('GET', `${H}/groups/{groupId}`)]: (w) => ({ path: `${H}/groups/${w.group}` }),
  [routeKey('PUT', `${H}/groups/{groupId}`)]: (w) => ({ path: `${H}/groups/${w.group}`, body: { description: 'Changed under faults' } }),
  [routeKey('DELETE', `${H}/groups/{groupId}`)]: (w) => ({ path: `${H}/groups/${w.groupToDelete}` }),
  [routeKey('GET', `${H}/groups/{groupId}/members`)]: (w) => ({ path: `${H}/groups/${w.group}/members` }),
  [routeKey('POST', `${H}/groups/{groupId}/members`)]: (w) => ({ path: `${H}/groups/${w.group}/members`, body: { userId: w.agents[3] } }),
  [routeKey('PUT', `${H}/groups/{groupId}/members/{userId}`)]: (w) => ({ path: `${H}/groups/${w.group}/members/${w.agents[0]}`, body: { maxOpenTickets: 7 } }),
  [routeKey('DELETE', `${H}/groups/{groupId}/members/{userId}`)]: (w) => ({ path: `${H}/groups/${w.group}/members/${w.agents[1]}` }),
  [routeKey('POST', `${H}/groups/{groupId}/members/bulk`)]: (w) => ({ path: `${H}/groups/${w.group}/members/bulk`, body: { userIds: [w.agents[4]] } }),
  [routeKey('POST', `${H}/groups/{groupId}/members/bulk-remove`)]: (w) => ({ path: `${H}/groups/${w.group}/members/bulk-remove`, body: { userIds: [w.agents[2]] } }),
  [routeKey('PUT', `${H}/groups/{groupId}/lead`)]: (w) => ({ path: `${H}/groups/${w.group}/lead`, body: { userId: w.agents[0] } }),
  [routeKey('PUT', `${H}/groups/{groupId}/deactivate`)]: (w) => ({ path: `${H}/groups/${w.groupToDeactivate}/deactivate` }),
  [routeKey('PUT', `${H}/groups/{groupId}/reactivate`)]: (w) => ({ path: `${H}/groups/${w.groupToReactivate}/reactivate` }),
  [routeKey('PUT', `${H}/groups/{groupId}/default`)]: (w) => ({ path: `${H}/groups/${w.groupToMakeDefault}/default` }),
  [routeKey('POST', `${H}/groups/{groupId}/distribution/test`)]: (w) => ({ path: `${H}/groups/${w.group}/distribution/test`, body: { ticket: { tags: ['billing'] } } }),

  [routeKey('GET', `${V1}/webhooks`)]: () => ({ path: `${V1}/webhooks` }),
  [routeKey('GET', `${V1}/webhooks/{id}`)]: (w) => ({ path: `${V1}/webhooks/${w.webhook}` }),
  [routeKey('POST', `${V1}/webhooks`)]: (w, n) => ({
    path: `${V1}/webhooks`,
    body: { webhook: { name: `Swept hook ${n}`, targetUrl: receiver().url(`${w.webhookPath}-swept`), events: ['ticket.deleted'], active: false } },
  }),
  [routeKey('PUT', `${V1}/webhooks/{id}`)]: (w) => ({ path: `${V1}/webhooks/${w.webhook}`, body: { webhook: { name: 'Renamed hook' } } }),
  [routeKey('POST', `${V1}/webhooks/{id}/rotate_secret`)]: (w) => ({ path: `${V1}/webhooks/${w.webhookToDelete}/rotate_secret` }),
  [routeKey('POST', `${V1}/webhooks/{id}/test`)]: (w) => ({ path: `${V1}/webhooks/${w.webhook}/test` }),
  [routeKey('DELETE', `${V1}/webhooks/{id}`)]: (w) => ({ path: `${V1}/webhooks/${w.webhookToDelete}` }),
  [routeKey('GET', `${V1}/webhooks/{id}/deliveries`)]: (w) => ({ path: `${V1}/webhooks/${w.webhook}/deliveries` }),
  [routeKey('POST', `${V1}/webhooks/{id}/deliveries/{deliveryId}/redeliver`)]: (w) => ({ path: `${V1}/webhooks/${w.webhook}/deliveries/${w.delivery}/redeliver` }),

  [routeKey('GET', `${H}/sla-policies`)]: () => ({ path: `${H}/sla-policies` }),
  [routeKey('POST', `${H}/sla-policies`)]: (_, n) => ({ path: `${H}/sla-policies`, body: slaPolicy(`Swept SLA ${n}`) }),
  [routeKey('PUT', `${H}/sla-policies/reorder`)]: async (w) => ({
    path: `${H}/sla-policies/reorder`,
    body: { orderedIds: (await settle('GET', `${H}/sla-policies`, { token: w.key }, [200])).body.data.map((p: Json) => p.id).reverse() },
  }),
  [routeKey('POST', `${H}/sla-policies/test`)]: () => ({ path: `${H}/sla-policies/test`, body: { ticket: { priority: 'urgent' } } }),
  [routeKey('GET', `${H}/sla-policies/ticket/{ticketId}`)]: (w) => ({ path: `${H}/sla-policies/ticket/${w.ticket.id}` }),
  [routeKey('POST', `${H}/sla-policies/recompute`)]: () => ({ path: `${H}/sla-policies/recompute` }),
  [routeKey('GET', `${H}/sla-policies/schedule`)]: () => ({ path: `${H}/sla-policies/schedule` }),
  [routeKey('PUT', `${H}/sla-policies/schedule`)]: () => ({
    path: `${H}/sla-policies/schedule`,
    body: { schedule: { timeZone: 'Europe/Berlin', days: { mon: [{ start: '09:00', end: '17:00' }], tue: [{ start: '09:00', end: '17:00' }] } } },
  }),
  [routeKey('GET', `${H}/email/settings`)]: () => ({ path: `${H}/email/settings` }),
  [routeKey('PUT', `${H}/email/settings`)]: (_, n) => ({ path: `${H}/email/settings`, body: { supportAddresses: [`help${n}@customer.example`], fromName: `Support ${n}` } }),
  [routeKey('GET', `${V1}/satisfaction/settings`)]: () => ({ path: `${V1}/satisfaction/settings` }),
  [routeKey('PUT', `${V1}/satisfaction/settings`)]: (_, n) => ({ path: `${V1}/satisfaction/settings`, body: { settings: { enabled: n % 2 === 1 } } }),
  [routeKey('GET', `${V1}/satisfaction_ratings`)]: () => ({ path: `${V1}/satisfaction_ratings?score=good` }),
  [routeKey('GET', '/helpdesk/satisfaction/{token}')]: async (w) => ({ path: `/helpdesk/satisfaction/${await surveyTokenInStore(w.acct.accountId, w.ticket.id)}?score=good` }),
  [routeKey('POST', '/helpdesk/satisfaction/{token}')]: async (w) => ({
    path: `/helpdesk/satisfaction/${await surveyTokenInStore(w.acct.accountId, w.ticket.id)}`,
    body: { score: 'bad', comment: 'Swept' },
  }),
  [routeKey('PUT', `${H}/sla-policies/{policyId}`)]: (w) => ({ path: `${H}/sla-policies/${w.policy}`, body: slaPolicy('Renamed SLA') }),
  [routeKey('DELETE', `${H}/sla-policies/{policyId}`)]: (w) => ({ path: `${H}/sla-policies/${w.policyToDelete}` }),

  [routeKey('GET', `${V1}/tickets/{id}/audits`)]: (w) => ({ path: `${V1}/tickets/${w.ticket.id}/audits` }),
  [routeKey('GET', `${V1}/audits`)]: () => ({ path: `${V1}/audits?resource_type=ticket` }),
  [routeKey('GET', `${V1}/exports/tickets`)]: () => ({ path: `${V1}/exports/tickets?start_time=2020-01-01T00:00:00Z` }),
  [routeKey('GET', `${V1}/exports/contacts`)]: () => ({ path: `${V1}/exports/contacts?start_time=2020-01-01T00:00:00Z` }),
  [routeKey('GET', `${V1}/exports/organizations`)]: () => ({ path: `${V1}/exports/organizations?start_time=2020-01-01T00:00:00Z` }),
  [routeKey('GET', `${V1}/exports/users`)]: () => ({ path: `${V1}/exports/users?start_time=2020-01-01T00:00:00Z` }),
};

/**
 * When a route's request runs in a round: phase 1 (the rest) reads and writes that leave their target in place, side
 * by side; phase 2 the writes that consume their target, after those; phase 3 the writes that name every record of a
 * kind (a reorder), at the end, when no other request of the round adds or removes one.
 */
const PHASES: Record<string, 2 | 3> = {
  [routeKey('DELETE', `${P}/users/{user_id}`)]: 2,
  [routeKey('DELETE', `${P}/api-keys/{key_id}`)]: 2,
  [routeKey('DELETE', `${V1}/tickets/{id}`)]: 2,
  [routeKey('DELETE', `${H}/contacts/{contactId}`)]: 2,
  [routeKey('DELETE', `${H}/organizations/{organizationId}`)]: 2,
  [routeKey('DELETE', `${V1}/ticket_fields/{id}`)]: 2,
  [routeKey('DELETE', `${V1}/ticket_fields/{id}/options/{optionId}`)]: 2,
  [routeKey('PUT', `${H}/automations/reorder`)]: 3,
  [routeKey('DELETE', `${H}/automations/{automationId}`)]: 2,
  [routeKey('DELETE', `${H}/groups/{groupId}`)]: 2,
  [routeKey('DELETE', `${H}/groups/{groupId}/members/{userId}`)]: 2,
  [routeKey('POST', `${H}/groups/{groupId}/members/bulk-remove`)]: 2,
  [routeKey('DELETE', `${V1}/webhooks/{id}`)]: 2,
  [routeKey('PUT', `${H}/sla-policies/reorder`)]: 3,
  [routeKey('DELETE', `${H}/sla-policies/{policyId}`)]: 2,
  [routeKey('DELETE', `${V1}/views/{id}`)]: 2,
  [routeKey('DELETE', `${V1}/macros/{id}`)]: 2,
};

/** Every committed ticket's ticket.created delivered to `path`, or dead-lettered; the pipeline drained and swept until then. */
async function deliveredOrDeadLettered(path: string, ticketIds: readonly string[], timeoutMs = 120_000): Promise<{ delivered: Set<string>; deadLettered: Set<string> }> {
  const sqs = new SQSClient({ region: 'us-east-1', endpoint: fileSqsEndpoint(), credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const deadLettered = new Set<string>();
  const until = Date.now() + timeoutMs;
  try {
    for (;;) {
      await pipeline().drained({ delayed: true });
      // What the stream path dropped (PutEvents refused entries three times in a row, a publisher that failed) is the sweeper's.
      await pipeline()
        .sweep(0)
        .catch(() => undefined);
      await pipeline().drained({ delayed: true });
      for (const url of [process.env.WEBHOOK_DELIVERY_DLQ_URL, process.env.WEBHOOK_FANOUT_DLQ_URL]) {
        if (!url) continue;
        for (;;) {
          const out = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, VisibilityTimeout: 600 }));
          if (!out.Messages?.length) break;
          for (const m of out.Messages) for (const id of ticketIds) if (m.Body?.includes(id)) deadLettered.add(id);
        }
      }
      const got = receivedTickets(path);
      // No pause: the next round waits on the pipeline's drain again.
      if (ticketIds.every((id) => got.has(id) || deadLettered.has(id)) || Date.now() > until) return { delivered: got, deadLettered };
    }
  } finally {
    sqs.destroy();
  }
}

/** Ticket ids of the ticket.created deliveries a receiver path got. */
const receivedByPath = new Map<string, ReturnType<ReturnType<typeof receiver>['endpoint']>>();
function receivedTickets(path: string): Set<string> {
  const ep = receivedByPath.get(path);
  return new Set((ep?.received ?? []).map((r) => JSON.parse(r.body)).flatMap((b) => (b.event === 'ticket.created' ? [b.data.ticket.id as string] : [])));
}

describe('every endpoint under injected AWS faults', () => {
  it('answers each request of the route table its normal answer or a 503 with Retry-After in its envelope, never a 500 or 502', async () => {
    // Arrange: the account and its agents come from this file's fixtures (honest); everything else goes through the API.
    const acct = await account();
    const agents = await Promise.all(Array.from({ length: 5 }, async () => (await acct.addUser('member')).id));
    const routes = allRoutes();
    const missing = routes.filter((r) => !REQUESTS[routeKey(r.method, r.path)]).map((r) => routeKey(r.method, r.path));
    expect(missing, 'every route needs a valid request in REQUESTS').toEqual([]);

    // Act: rounds on fresh records, each route once a round, in the phases its request asks for.
    const ROUNDS = 2;
    const phaseOf = (route: RouteContract) => PHASES[routeKey(route.method, route.path)] ?? 1;
    for (let n = 1; n <= ROUNDS; n++) {
      const w = await buildWorld(acct, agents);
      for (const phase of [1, 2, 3]) {
        // Twelve at a time: most of a request's time here is waiting out an injected hang or the SDK's throttle
        // backoff, not work (the sweep alone: 53 s at 6, 34 s at 12; docs/performance.md, "Stop 55").
        await inParallel(
          routes.filter((r) => phaseOf(r) === phase),
          12,
          async (route) => {
            const req = await REQUESTS[routeKey(route.method, route.path)](w, n);
            const call: Call = { token: req.session ? w.session : w.key, body: req.body, key: takesIdempotencyKey(route) ? randomUUID() : undefined };
            await send(route.method, req.path, call, req.normal ?? [route.success.status]);
          },
        );
      }
    }

    // Assert
    const injected = (await localLambda()).injectedFaults();
    console.log(JSON.stringify({ answers: { normal: ledger.normal, unavailable: ledger.unavailable, violations: ledger.violations.length }, injected }));
    expect(ledger.violations).toEqual([]);
    expect(ledger.normal).toBeGreaterThan(ROUNDS * routes.length);
    // The faults did happen, of every kind asked for, and the deployed code's retries absorbed most of them.
    // S3 is called by two routes only, so an S3 fault is not certain in this sweep; the attachments test below runs its files under S3 faults.
    for (const kind of ['dynamodb:throttle', 'dynamodb:error', 'dynamodb:timeout', 'events:partial']) expect(injected[kind] ?? 0, kind).toBeGreaterThan(0);
  }, 600_000);
});

// Side by side, each on its own account: much of each is waiting out injected hangs and retries. They share the ledger,
// so each one's "no violation" holds for the other's requests too.
describe.concurrent('writes, events and attachments under injected AWS faults', () => {
  it('commits each ticket create whole or not at all: a 201 has its counters, option usage and contact exact; a 503 retried with its Idempotency-Key made one ticket, and one without a key at most one, counted like the rest', async () => {
    // Arrange
    const acct = await account();
    const key = acct.ownerKey;
    const tag = `c-${Date.now().toString(36)}`;
    const domain = `${tag}.faults.example`;
    const org = (await create(`${H}/organizations`, key, { name: `Org ${tag}`, organizationalDomain: domain })).data.id;
    const field = (
      await create(`${V1}/ticket_fields`, key, {
        ticketField: {
          title: `Tier ${tag}`,
          type: 'dropdown',
          options: [
            { name: 'Gold', value: 'gold' },
            { name: 'Silver', value: 'silver' },
          ],
        },
      })
    ).ticketField;
    const gold = (await settle('GET', `${V1}/ticket_fields/${field.id}/options`, { token: key }, [200])).body.customFieldOptions.find((o: Json) => o.value === 'gold').id;
    const path = `/faults-${tag}`;
    const hook = (await create(`${V1}/webhooks`, key, { webhook: { name: `hook ${tag}`, targetUrl: receiver().url(path), events: ['ticket.created'] } })).webhook;
    receivedByPath.set(path, receiver().endpoint(path, hook.signingSecret));
    const requesters = Array.from({ length: 4 }, (_, i) => `requester${i}@${domain}`);
    const CREATES = 48;

    // Act: concurrent creates, one try each; half carry an Idempotency-Key, and a 503 among those is retried with it.
    const outcomes: Array<{ subject: string; requester: string; keyed: boolean; first: number; ticketId?: string }> = [];
    await inParallel(
      Array.from({ length: CREATES }, (_, i) => i),
      8,
      async (i) => {
        const subject = `Burst ${tag} ${i}`;
        const requester = requesters[i % requesters.length];
        const keyed = i % 2 === 0;
        const call: Call = { token: key, key: keyed ? randomUUID() : undefined, body: { ticket: { subject, requesterEmail: requester, customFields: [{ id: field.id, value: 'gold' }] } } };
        const first = await send('POST', `${V1}/tickets`, call, [201]);
        const outcome = { subject, requester, keyed, first: first.status, ticketId: first.status === 201 ? (first.body.ticket.id as string) : undefined };
        if (first.status === 503 && keyed) outcome.ticketId = (await settle('POST', `${V1}/tickets`, call, [201])).body.ticket.id;
        outcomes.push(outcome);
      },
    );

    // Assert: the store, read by this file's honest fixtures.
    const tickets = await import('#shared/tickets/repository.ts');
    const fields = await import('#shared/ticket-fields/repository.ts');
    const contacts = await import('#shared/contacts/repository.ts');
    const organizations = await import('#shared/organizations/repository.ts');
    const stored = await accountItems(acct.accountId, 'TICKET#', 'ticket');
    const bySubject = new Map<string, Json[]>();
    for (const t of stored) bySubject.set(t.subject, [...(bySubject.get(t.subject) ?? []), t]);
    // Without a key, a 503 may follow a commit whose answer was lost (decisions, "Ambiguous writes": a create retried
    // without a key may have been made): at most one ticket, and whatever committed counts below like a 201's.
    for (const o of outcomes.filter((x) => !x.ticketId && !x.keyed)) {
      const found = bySubject.get(o.subject) ?? [];
      expect(found.length, `${o.subject} answered 503 without a key: at most one ticket`).toBeLessThanOrEqual(1);
      o.ticketId = found[0]?.id;
    }
    const committed = outcomes.filter((o) => o.ticketId);
    // A 201, or a keyed 503 retried with its key: exactly the ticket answered, never a second.
    for (const o of committed)
      expect(
        (bySubject.get(o.subject) ?? []).map((t) => t.id),
        `${o.subject} (first answer ${o.first}, keyed ${o.keyed})`,
      ).toEqual([o.ticketId]);
    // Every stored ticket of the burst is one of those: nothing committed that no answer or check accounts for.
    expect(stored.filter((t) => String(t.subject).startsWith(`Burst ${tag} `)).length).toBe(committed.length);
    for (const o of committed) expect(await tickets.getTicket(acct.accountId, o.ticketId!)).toMatchObject({ subject: o.subject, requesterEmail: o.requester });
    expect((await fields.getOption(acct.accountId, field.id, gold))!.usageCount).toBe(committed.length);
    for (const email of requesters) {
      const contact = await contacts.contactByEmail(acct.accountId, email);
      const expected = committed.filter((o) => o.requester === email).length;
      if (!expected) continue;
      expect(contact, email).toMatchObject({ organizationId: org });
      expect(await requesterTickets(acct.accountId, email), email).toBe(expected);
    }
    const orgRecord = await organizations.getOrganization(acct.accountId, org);
    expect(orgRecord).toMatchObject({ ticketCount: committed.length, contactCount: new Set(committed.map((o) => o.requester)).size });

    // No event is lost: every committed ticket's ticket.created reaches the bus, by the stream or the sweeper, and its delivery ends delivered or dead-lettered.
    const ids = committed.map((o) => o.ticketId!);
    const { delivered, deadLettered } = await deliveredOrDeadLettered(path, ids);
    const lost = ids.filter((id) => !delivered.has(id) && !deadLettered.has(id));
    const log = (await settle('GET', `${V1}/webhooks/${hook.id}/deliveries?page_size=100`, { token: key }, [200])).body.deliveries as Json[];
    console.log(
      JSON.stringify({
        creates: CREATES,
        first503: outcomes.filter((o) => o.first === 503).length,
        committed: committed.length,
        delivered: delivered.size,
        deadLettered: deadLettered.size,
        lost: lost.length,
      }),
    );
    expect(lost).toEqual([]);
    expect(log.filter((d) => !['succeeded', 'failed'].includes(d.state)).map((d) => `${d.deliveryId} ${d.state}`)).toEqual([]);
    expect(ledger.violations).toEqual([]);
  }, 300_000);

  it('never leaves a message attached to a missing file: each committed message downloads its bytes, and a 503 left the token for its retry', async () => {
    // Arrange: uploads with their bytes in S3 (the client's own PUTs, honest).
    const acct = await account();
    const key = acct.ownerKey;
    const session = await acct.session(acct.ownerId);
    const ticket = (await create(`${V1}/tickets`, key, { ticket: { subject: 'Attachments under faults' } })).ticket;
    const FILES = 16;
    const files = await Promise.all(
      Array.from({ length: FILES }, async (_, i) => {
        const bytes = Buffer.from(`file ${i} ${randomUUID()}`);
        const upload = (await create(`${H}/uploads`, key, { name: `file-${i}.txt`, size: bytes.length, contentType: 'text/plain' })).data;
        const put = await fetch(upload.uploadUrl, { method: upload.uploadMethod, headers: upload.uploadHeaders, body: bytes });
        expect(put.status).toBe(200);
        return { bytes, token: upload.token as string };
      }),
    );

    // Act: one message per file, side by side, one try each; a 503 is retried with its Idempotency-Key.
    const outcomes: Array<{ i: number; first: number; attachment?: string }> = [];
    await inParallel(files, 4, async ({ token }, i) => {
      const call: Call = { token: session, key: randomUUID(), body: { ticket_id: ticket.id, type: 'note', content: `file ${i}`, attachments: [{ token }] } };
      const first = await send('POST', `${H}/messages`, call, [201]);
      const done = first.status === 201 ? first : await settle('POST', `${H}/messages`, call, [201]);
      outcomes.push({ i, first: first.status, attachment: done.body.data.attachments[0].id });
    });

    // Assert: every message's file is there, with its bytes; one message per file.
    for (const o of outcomes) {
      const url = (await settle('GET', `${H}/attachments/${o.attachment}`, { token: key }, [200])).body.data.url;
      const got = await fetch(url);
      expect(got.status, `file ${o.i} (first answer ${o.first})`).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(files[o.i].bytes), `file ${o.i}`).toBe(true);
    }
    const listed = (await settle('GET', `${H}/messages?ticket_id=${ticket.id}&limit=100`, { token: session }, [200])).body.data as Json[];
    expect(listed.map((m) => m.content).sort()).toEqual(files.map((_, i) => `file ${i}`).sort());
    const injected = (await localLambda()).injectedFaults();
    console.log(JSON.stringify({ messages: FILES, first503: outcomes.filter((o) => o.first === 503).length, injected }));
    expect(ledger.violations).toEqual([]);
  }, 180_000);
});

/** The ticket count the store keeps for a requester email. */
async function requesterTickets(accountId: string, email: string): Promise<number> {
  const contacts = await import('#shared/contacts/repository.ts');
  return (await contacts.requesterCount(accountId, email)).count;
}
