import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway, type TestAccount } from '../support/api.ts';

const { client } = useGateway();
const TICKETS = '/helpdesk/api/v1/tickets';
const USERS = '/playbook/api/v1/users';

let acct: TestAccount;
let other: TestAccount;

beforeAll(async () => {
  [acct, other] = await Promise.all([createTestAccount(), createTestAccount()]);
});

const post = (path: string, body: unknown, key?: string, token = acct.ownerKey) => client.request('POST', path, { token, body, headers: key === undefined ? {} : { 'Idempotency-Key': key } });

/** Tickets of the account with this subject (a fresh subject per test keeps the count exact). */
async function ticketsWithSubject(subject: string, token = acct.ownerKey) {
  const res = await client.request('GET', `${TICKETS}?page_size=100`, { token });
  return res.body.tickets.filter((t: { subject: string }) => t.subject === subject);
}

const key = () => `key-${Date.now()}-${Math.random()}`;

describe('Idempotency-Key on creates (decisions §3)', () => {
  it('a repeat with the same key and body answers the first answer again and writes nothing', async () => {
    const k = key();
    const body = { ticket: { subject: `idem ${k}`, tags: ['a'] } };

    const first = await post(TICKETS, body, k);
    const again = await post(TICKETS, { ticket: { tags: ['a'], subject: `idem ${k}` } }, k); // same body, other key order

    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-replayed')).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await ticketsWithSubject(`idem ${k}`)).toHaveLength(1);
  });

  it('the same key with a different body is a validation error naming the header, in each envelope', async () => {
    const k = key();
    expect((await post(TICKETS, { ticket: { subject: `first ${k}` } }, k)).status).toBe(201);

    const desk = await post(TICKETS, { ticket: { subject: `second ${k}` } }, k);
    expect(desk.status).toBe(422);
    expect(desk.body).toMatchObject({ success: false, error: { code: 'VALIDATION_ERROR', details: [{ field: 'Idempotency-Key' }] } });
    expect(await ticketsWithSubject(`second ${k}`)).toHaveLength(0);

    const u = key();
    expect((await post(USERS, { email: uniqueEmail('idem'), name: 'First' }, u)).status).toBe(201);
    const playbook = await post(USERS, { email: uniqueEmail('idem'), name: 'Second' }, u);
    expect(playbook.status).toBe(400);
    expect(playbook.body).toEqual({ error: { code: 'validation_error', message: expect.any(String), field: 'Idempotency-Key' } });
  });

  it('20 concurrent repeats create one record; the others replay it or answer 409', async () => {
    const k = key();
    const body = { ticket: { subject: `burst ${k}` } };

    const results = await Promise.all(Array.from({ length: 20 }, () => post(TICKETS, body, k)));

    expect(results.every((r) => r.status === 201 || r.status === 409)).toBe(true);
    const created = results.filter((r) => r.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((r) => r.body.ticket.id)).size).toBe(1);
    expect(results.filter((r) => r.status === 201 && r.headers.get('idempotency-replayed') !== 'true')).toHaveLength(1);
    expect(await ticketsWithSubject(`burst ${k}`)).toHaveLength(1);
  });

  it('a failed request gives the key back, so the corrected retry runs', async () => {
    const k = key();
    const bad = await post(TICKETS, { ticket: { subject: `retry ${k}`, priority: 'extreme' } }, k);
    expect(bad.status).toBe(422);

    const retried = await post(TICKETS, { ticket: { subject: `retry ${k}`, priority: 'high' } }, k);
    expect(retried.status).toBe(201);
    expect(retried.headers.get('idempotency-replayed')).toBeNull();
  });

  it('keys are per account: another account using the same key creates its own record', async () => {
    const k = key();
    const body = { ticket: { subject: `shared ${k}` } };
    const mine = await post(TICKETS, body, k);
    const theirs = await post(TICKETS, body, k, other.ownerKey);

    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotency-replayed')).toBeNull();
    expect(theirs.body.ticket.id).not.toBe(mine.body.ticket.id);
  });

  it('a malformed key is refused before anything is written', async () => {
    const subject = `malformed ${key()}`;
    for (const bad of ['x'.repeat(256), 'naïve-key']) {
      const res = await post(TICKETS, { ticket: { subject } }, bad);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ success: false, error: { code: 'BAD_REQUEST', details: [{ field: 'Idempotency-Key' }] } });
    }
    expect(await ticketsWithSubject(subject)).toHaveLength(0);
  });

  it('requests without the header, and non-create routes, are unaffected', async () => {
    const subject = `plain ${key()}`;
    expect((await post(TICKETS, { ticket: { subject } })).status).toBe(201);
    expect((await post(TICKETS, { ticket: { subject } })).status).toBe(201);
    expect(await ticketsWithSubject(subject)).toHaveLength(2);
  });
});
