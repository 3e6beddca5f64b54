import { beforeAll, describe, expect, it } from 'vitest';
import { STORE_ANSWERS, type StoreAnswer } from '../../local/dynamodb-proxy.ts';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { as, TICKETS, type Desk } from '../support/desk.ts';
import { useStoreProxy } from '../support/store-proxy.ts';

/**
 * The store throttling or failing: the functions reach DynamoDB Local through
 * a proxy that answers chosen attempts as DynamoDB does when it throttles or
 * fails (local/dynamodb-proxy.ts), so each function's own SDK retries them
 * like real ones; only the calls that touch one item are failed.
 */
const store = useStoreProxy();
// No authorizer cache: every request runs the authorizer, so its reads meet the faults injected for them.
const { client } = useGateway({ authorizerCacheTtlSeconds: 0 });
const ME = '/playbook/api/v1/users/me';

let acct: TestAccount;
let admin: Desk;

beforeAll(async () => {
  acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
});

const throttle = () => STORE_ANSWERS.throughputExceeded();
/** Fail every attempt of `operation` whose request (DynamoDB wire format) mentions `marker`; counts the attempts. */
function failWhen(operation: string, marker: string, answer: () => StoreAnswer = throttle, times = Infinity) {
  const seen = { attempts: 0 };
  store.inject((name, request) => {
    if (name !== operation || !JSON.stringify(request).includes(marker) || seen.attempts >= times) return undefined;
    seen.attempts += 1;
    return answer();
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
    const seen = failWhen('GetItem', id);

    const res = await admin.get(`${TICKETS}/${id}`);

    expectUnavailable(res, 'helpdesk');
    expect(seen.attempts).toBe(3);
    store.inject(undefined);
    expect((await admin.get(`${TICKETS}/${id}`)).status).toBe(200);
  });

  it('a throttled authorizer read: a valid key gets 503 in the user-management envelope, not 401', async () => {
    failWhen('GetItem', 'APIKEY#', () => STORE_ANSWERS.throttling());
    expectUnavailable(await client.request('GET', ME, { token: acct.ownerKey }), 'playbook');
  });

  it('a throttled session read (BatchGetItem of user and account): 503, not 401; a single throttled attempt is retried to 200', async () => {
    const token = await acct.session(acct.ownerId);
    failWhen('BatchGetItem', acct.accountId);
    expectUnavailable(await client.request('GET', ME, { token }), 'playbook');

    failWhen('BatchGetItem', acct.accountId, throttle, 1);
    expect((await client.request('GET', ME, { token })).status).toBe(200);
  });

  it('unprocessed BatchGetItem keys are read again, not taken as "no such user": a valid session token still gets 200', async () => {
    const token = await acct.session(acct.ownerId);
    let handedBack = 0;
    store.inject((name, request) => {
      if (name !== 'BatchGetItem' || !JSON.stringify(request).includes(acct.accountId) || handedBack >= 2) return undefined;
      handedBack += 1;
      return STORE_ANSWERS.allUnprocessed(request);
    });

    const res = await client.request('GET', ME, { token });

    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.id).toBe(acct.ownerId);
    expect(handedBack).toBe(2);
  });

  it('a throttled write: 503 and nothing written', async () => {
    const subject = `Never stored ${Date.now()}`;
    failWhen('TransactWriteItems', subject, () => STORE_ANSWERS.internalError());

    expectUnavailable(await admin.post(TICKETS, { ticket: { subject } }), 'helpdesk');

    store.inject(undefined);
    const list = await admin.get(`${TICKETS}?page_size=100`);
    expect(list.body.tickets.map((t: { subject: string }) => t.subject)).not.toContain(subject);
  });

  it('a throttled rate-limit count: 503 (the request is neither answered nor refused as over its limit)', async () => {
    failWhen('UpdateItem', 'RL#');
    expectUnavailable(await admin.get(TICKETS), 'helpdesk');
  });

  it('an unreachable store (every connection dropped before an answer): 503', async () => {
    failWhen('Query', acct.accountId, STORE_ANSWERS.connectionReset);
    expectUnavailable(await admin.get(TICKETS), 'helpdesk');
  });
});
