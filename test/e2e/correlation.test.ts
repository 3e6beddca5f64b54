import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway, type TestAccount } from '../support/api.ts';
import { outboxItems, TICKETS } from '../support/desk.ts';

const { client } = useGateway();
let acct: TestAccount;

beforeAll(async () => {
  acct = await createTestAccount();
});

describe('correlation ids', () => {
  it("echo the caller's x-request-id and travel inside the events the request records", async () => {
    const id = `req-${Date.now()}`;
    const res = await client.request('POST', TICKETS, { token: acct.ownerKey, body: { ticket: { subject: 'Correlated' } }, headers: { 'x-request-id': id } });

    expect(res.status).toBe(201);
    expect(res.headers.get('x-request-id')).toBe(id);
    const events = (await outboxItems(acct.accountId)).filter((o) => o.detail.data?.ticket?.id === res.body.ticket.id);
    expect(events.map((e) => e.detail.correlationId)).toEqual([id]);
  });

  it('are generated when absent or unusable, errors included, and differ per request', async () => {
    const a = await client.request('GET', `${TICKETS}/tkt_missing`, { token: acct.ownerKey });
    const b = await client.request('GET', TICKETS, { token: acct.ownerKey, headers: { 'x-request-id': 'has spaces in it' } });

    expect(a.status).toBe(404);
    expect(a.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(b.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers.get('x-request-id')).not.toBe(b.headers.get('x-request-id'));
  });
});
