/**
 * The first request of each function's cold start (issue 42, part 1): the
 * event bench/bundles.ts hands the handler right after importing its bundle in
 * a fresh process, against the bench stack's store, queues and bus. One cheap,
 * realistic call per function, by what invokes it in the template:
 *
 *   - an API group: API Gateway's proxy event (local/api-event.ts, as the local
 *     gateway builds it) for one read of that group (ROUTES), with the context
 *     the stack's authorizer gives the bench account's API key;
 *   - the authorizer: its REQUEST event for that key (one GetItem of the key);
 *   - an SQS consumer: a one-message batch carrying the bus envelope of a real
 *     `ticket.created` of the bench account (its outbox item). Consumers of
 *     other messages (deliveries, jobs, mail, recounts) refuse it as
 *     malformed: a handled failure, which still counts as the first call;
 *   - the stream handler (outbox publisher): the INSERT record of a real outbox
 *     item, which it puts on the local bus and deletes (a new item each time);
 *   - a schedule: the scheduled event EventBridge passes;
 *   - the inbound mail function: an SNS record of an SES delivery notification
 *     for a mail it never sent (read, found unknown, dropped).
 *
 * The floor (bench/cold-floor.ts) gets the key of one of the bench's tickets.
 */
import { marshall } from '@aws-sdk/util-dynamodb';
import { authorizerEvent, authorize, proxyEvent, type AuthorizerResult } from '../local/api-event.ts';
import type { FunctionDef } from '../local/lambda/deployment.ts';
import { LOCAL_ACCOUNT, type LocalLambda } from '../local/lambda/index.ts';
import { scheduledEvent } from '../local/schedules.ts';
import { LOCAL_REGION } from '../local/stack.ts';
import { sqsEvent } from './stack.ts';

/** The read each API group's first request makes: a GET of the group, `{…}` parameters filled with a bench ticket's id. */
export const ROUTES: Record<string, string> = {
  users: '/playbook/api/v1/users/me',
  tickets: '/helpdesk/api/v1/tickets/{id}',
  contacts: '/helpdesk/api/contacts',
  organizations: '/helpdesk/api/organizations',
  messages: '/helpdesk/api/email/settings',
  ticketFields: '/helpdesk/api/v1/ticket_fields',
  automations: '/helpdesk/api/automations',
  groups: '/helpdesk/api/groups',
  webhooks: '/helpdesk/api/v1/webhooks',
  slaPolicies: '/helpdesk/api/sla-policies',
  history: '/helpdesk/api/v1/tickets/{id}/audits',
  jobs: '/helpdesk/api/v1/retention',
  satisfaction: '/helpdesk/api/v1/satisfaction/settings',
  views: '/helpdesk/api/v1/views',
};

/** The bench account whose data the first requests read. */
export interface BenchAccount {
  accountId: string;
  apiKey: string;
  /** Ids of tickets it has (the floor reads one, GET ticket another). */
  tickets: string[];
}

export interface FirstRequest {
  /** What the call is, for the table. */
  what: string;
  /** The event of the `n`th cold start of this function (a stream record is a new outbox item each time). */
  event(n: number): unknown;
}

/** The floor's first call: a GetItem of one of the account's tickets. */
export const floorRequest = (a: BenchAccount): FirstRequest => ({
  what: 'GetItem of a ticket',
  event: (n) => ({ key: { pk: `A#${a.accountId}`, sk: `TICKET#${a.tickets[n % a.tickets.length]}` } }),
});

/** Each function's first request (by logical id), replaying the account's outbox items (one ticket is written when none is left); call while no pipeline runs. */
export async function firstRequests(lambda: LocalLambda, a: BenchAccount): Promise<Map<string, FirstRequest>> {
  const d = lambda.deployment;
  const { ddb, tableName } = await import('#shared/db/client.ts');
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const stage = { restApiId: lambda.apiGateway.restApiId, stageName: lambda.apiGateway.stageName };
  const request = (resource: string) => {
    const path = resource.replace(/\{[^}]+\}/g, a.tickets[0]);
    const params = Object.fromEntries([...resource.matchAll(/\{([^}+]+)\}/g)].map((m) => [m[1], a.tickets[0]]));
    return proxyEvent(stage, {
      method: 'GET',
      path,
      resource,
      params,
      rawHeaders: ['Authorization', `Bearer ${a.apiKey}`, 'Accept', 'application/json'],
      searchParams: new URLSearchParams(),
      body: Buffer.alloc(0),
      sourceIp: '127.0.0.1',
    });
  };
  // The authorizer's answer for the key, from the stack's own (warm) authorizer, as the gateway passes it on.
  const authEvent = authorizerEvent(request(ROUTES.tickets));
  const auth = await lambda.fn(d.api.authorizerFunctionId).invoke<AuthorizerResult>(authEvent);
  if (!auth.context || 'authError' in auth.context) throw new Error(`The bench key is refused: ${JSON.stringify(auth)}`);

  // The consumers' and the publisher's first requests replay the account's own outbox items.
  const readOutbox = async () =>
    (
      await ddb.send(
        new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)', ExpressionAttributeValues: { ':pk': `A#${a.accountId}`, ':p': 'OUTBOX#' } }),
      )
    ).Items as Array<Record<string, any>>;
  let outbox = await readOutbox();
  if (!outbox.some((i) => i.detail?.event === 'ticket.created')) {
    // In a full run the earlier sections' pipelines published them (and deleted them): one more ticket, written by the
    // service as the API writes it, while no pipeline runs.
    const { PrincipalSchema } = await import('#shared/auth/principal.ts');
    const { createTicket } = await import('#shared/tickets/service.ts');
    const { CreateTicketBodySchema } = await import('#shared/tickets/model.ts');
    await createTicket(PrincipalSchema.parse(auth.context), CreateTicketBodySchema.parse({ ticket: { subject: 'Bench: the first requests of the consumers' } }).ticket);
    outbox = await readOutbox();
  }
  const created = outbox.filter((i) => i.detail?.event === 'ticket.created');
  if (!created.length) throw new Error('The bench account has no ticket.created in its outbox');

  const envelope = (detail: any) => JSON.stringify({ version: '0', id: detail.eventId, source: 'support-desk.tickets', 'detail-type': detail.event, time: detail.timestamp, detail });
  const out = new Map<string, FirstRequest>();
  const byFunction = (def: FunctionDef): FirstRequest | undefined => {
    const id = def.logicalId;
    if (id === d.api.authorizerFunctionId) return { what: 'REQUEST authorizer, API key', event: () => authEvent };
    const group = def.name.startsWith('Group-') ? def.name.slice('Group-'.length) : undefined;
    const resource = group && ROUTES[group];
    if (resource) {
      if (!d.api.routes.some((r) => r.functionId === id && r.method === 'GET' && r.path === resource)) throw new Error(`${def.name} serves no GET ${resource}`);
      return {
        what: `GET ${resource.replace(/^\/(helpdesk|playbook)\/api/, '')}`,
        event: () => {
          const ev = request(resource);
          authorize(ev, auth);
          return ev;
        },
      };
    }
    if (d.api.routes.some((r) => r.functionId === id && !r.authorized && r.path.endsWith('{proxy+}')))
      return { what: 'GET of an unknown path', event: () => request('/helpdesk/api/v1/no-such-thing') };
    const sqs = d.sqsMappings.find((m) => m.functionId === id);
    if (sqs) {
      const queue = d.queues.get(sqs.queueId)!;
      const arn = `arn:aws:sqs:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${queue.name}`;
      return {
        what: `SQS ${queue.name}: a ticket.created`,
        event: (n) => sqsEvent([{ MessageId: `cold-${n}`, ReceiptHandle: `cold-${n}`, Body: envelope(created[n % created.length].detail) }], arn),
      };
    }
    if (d.streamMappings.some((m) => m.functionId === id)) {
      return {
        what: 'stream INSERT of an outbox item',
        event: (n) => {
          const item = outbox[n % outbox.length];
          return {
            Records: [
              {
                eventID: `cold-${n}`,
                eventName: 'INSERT',
                eventVersion: '1.1',
                eventSource: 'aws:dynamodb',
                awsRegion: LOCAL_REGION,
                eventSourceARN: `arn:aws:dynamodb:${LOCAL_REGION}:${LOCAL_ACCOUNT}:table/${tableName()}/stream/local`,
                dynamodb: {
                  Keys: marshall({ pk: item.pk, sk: item.sk }),
                  NewImage: marshall(item, { removeUndefinedValues: true }),
                  SequenceNumber: String(n + 1),
                  StreamViewType: 'NEW_IMAGE',
                  ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
                },
              },
            ],
          };
        },
      };
    }
    const schedule = d.schedules.find((s) => s.functionId === id);
    if (schedule) return { what: 'scheduled event', event: () => scheduledEvent(`arn:aws:events:${LOCAL_REGION}:${LOCAL_ACCOUNT}:rule/${schedule.logicalId}`) };
    if (d.topicSubscriptions.some((s) => s.functionId === id))
      return {
        what: 'SNS: SES delivery of an unknown mail',
        event: (n) => ({
          Records: [{ EventSource: 'aws:sns', Sns: { MessageId: `cold-${n}`, Message: JSON.stringify({ eventType: 'Delivery', mail: { messageId: `cold-${n}@bench.example` } }) } }],
        }),
      };
    return undefined;
  };
  for (const def of d.functions.values()) {
    const r = byFunction(def);
    if (r) out.set(def.logicalId, r);
  }
  return out;
}
