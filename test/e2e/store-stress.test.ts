import { InternalServerError, ProvisionedThroughputExceededException, ThrottlingException } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { injectStoreFailures } from '#shared/db/client.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, TICKETS, type Desk } from '../support/desk.ts';

/**
 * The store throttling or failing: failures are injected on the one DynamoDB
 * client, inside the SDK's retry loop (so they are retried like real ones),
 * for the calls that touch one item.
 */
const { client } = useGateway();
const ME = '/playbook/api/v1/users/me';

let acct: TestAccount;
let admin: Desk;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
});

afterEach(() => injectStoreFailures(undefined));

const meta = { $metadata: { httpStatusCode: 400 } };
const throttle = () => new ProvisionedThroughputExceededException({ message: 'injected throttle', ...meta });
/** Fail every attempt of `command` whose input mentions `marker`; counts the attempts. */
function failWhen(command: string, marker: string, error: () => Error = throttle, times = Infinity) {
  const seen = { attempts: 0 };
  injectStoreFailures((name, input) => {
    if (name !== command || !JSON.stringify(input).includes(marker) || seen.attempts >= times) return undefined;
    seen.attempts += 1;
    return error();
  });
  return seen;
}

function expectUnavailable(res: { status: number; headers: Headers; body: any }, iface: 'helpdesk' | 'playbook') {
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  if (iface === 'helpdesk') expect(res.body).toEqual({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String) } });
  else expect(res.body).toEqual({ error: { code: 'service_unavailable', message: expect.any(String) } });
}

describe('a struggling store answers 503 with Retry-After, never 500 or 401', () => {
  it('a throttled read of the ticket: 503 in the support-desk envelope, after the SDK retried it', async () => {
    const id = (await admin.post(TICKETS, { ticket: { subject: 'Throttled' } })).body.ticket.id as string;
    const seen = failWhen('GetItemCommand', id);

    const res = await admin.get(`${TICKETS}/${id}`);

    expectUnavailable(res, 'helpdesk');
    expect(seen.attempts).toBe(3);
    injectStoreFailures(undefined);
    expect((await admin.get(`${TICKETS}/${id}`)).status).toBe(200);
  });

  it('a throttled authorizer read: a valid key gets 503 in the user-management envelope, not 401', async () => {
    failWhen('GetItemCommand', 'APIKEY#', () => new ThrottlingException({ message: 'injected', ...meta }));
    expectUnavailable(await client.request('GET', ME, { token: acct.ownerKey }), 'playbook');
  });

  it('a throttled session read (BatchGetItem of user and account): 503, not 401; a single throttled attempt is retried to 200', async () => {
    const token = await acct.session(acct.ownerId);
    failWhen('BatchGetItemCommand', acct.accountId);
    expectUnavailable(await client.request('GET', ME, { token }), 'playbook');

    failWhen('BatchGetItemCommand', acct.accountId, throttle, 1);
    expect((await client.request('GET', ME, { token })).status).toBe(200);
  });

  it('unprocessed BatchGetItem keys are read again, not taken as "no such user": a valid session token still gets 200', async () => {
    const token = await acct.session(acct.ownerId);
    let handedBack = 0;
    injectStoreFailures((name, input) => {
      if (name !== 'BatchGetItemCommand' || !JSON.stringify(input).includes(acct.accountId) || handedBack >= 2) return undefined;
      handedBack += 1;
      return { unprocessedKeys: true };
    });

    const res = await client.request('GET', ME, { token });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(acct.ownerId);
    expect(handedBack).toBe(2);
  });

  it('a throttled write: 503 and nothing written', async () => {
    const subject = `Never stored ${Date.now()}`;
    failWhen('TransactWriteItemsCommand', subject, () => new InternalServerError({ message: 'injected', ...meta }));

    expectUnavailable(await admin.post(TICKETS, { ticket: { subject } }), 'helpdesk');

    injectStoreFailures(undefined);
    const list = await admin.get(`${TICKETS}?page_size=100`);
    expect(list.body.tickets.map((t: { subject: string }) => t.subject)).not.toContain(subject);
  });

  it('a throttled rate-limit count: 503 (the request is neither answered nor refused as over its limit)', async () => {
    failWhen('UpdateItemCommand', 'RL#');
    expectUnavailable(await admin.get(TICKETS), 'helpdesk');
  });

  it('an unreachable store (connection refused): 503', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED', name: 'Error' });
    failWhen('QueryCommand', acct.accountId, () => refused);
    expectUnavailable(await admin.get(TICKETS), 'helpdesk');
  });
});
