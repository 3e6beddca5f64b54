import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();
const USERS = '/playbook/api/v1/users';

const huge = 'x'.repeat(100_000);
const BODIES: (string | Buffer)[] = [
  '{',
  '{"email": }',
  '[]',
  '[{"email":"a@b.co"}]',
  'null',
  '0',
  'true',
  '"string"',
  '{"email":null,"name":null,"role":null,"status":null}',
  '{"email":123,"name":{},"role":[],"send_invitation":"no"}',
  `{"email":"${huge}@example.com","name":"${huge}"}`,
  '{"email":"a@b","name":"\\u0000\\ud800\\uffff","role":"member"}',
  '{"name":"🙂".repeat}',
  JSON.stringify({ email: 'ok@', name: '', extra: JSON.parse('['.repeat(500) + ']'.repeat(500)) }),
  Buffer.from([0xff, 0xfe, 0x00, 0x7b]),
  '{"__proto__":{"admin":true},"constructor":{"prototype":{}}}',
];

describe('bad input never produces a 5xx', () => {
  it('survives malformed bodies, wrong types, huge strings and odd paths on every user endpoint, writing nothing', async () => {
    const acct = await createTestAccount();
    const member = await acct.addUser('member');
    const before = (await client.request('GET', USERS, { token: acct.ownerKey })).body.pagination.total_count;
    const paths = [
      ['GET', USERS],
      ['GET', `${USERS}/me`],
      ['GET', `${USERS}/${member.id}`],
      ['POST', USERS],
      ['PATCH', `${USERS}/${member.id}`],
      ['DELETE', `${USERS}/${'y'.repeat(10_000)}`],
      ['GET', `${USERS}/${'%ZZ'}`],
      ['GET', `${USERS}?limit=${huge.slice(0, 2_000)}&cursor=${huge.slice(0, 2_000)}&search=${huge.slice(0, 2_000)}`],
      ['PATCH', `${USERS}/${encodeURIComponent('../../etc/passwd')}`],
    ];
    const statuses: number[] = [];
    for (const [method, path] of paths) {
      for (const rawBody of method === 'GET' ? [undefined] : method === 'DELETE' ? [undefined, '{'] : BODIES) {
        const res = await client.request(method, path, { token: acct.ownerKey, rawBody: rawBody as string | undefined });
        statuses.push(res.status);
        expect(res.status, `${method} ${path.slice(0, 80)} ${String(rawBody).slice(0, 60)}`).toBeLessThan(500);
        expect(String(res.headers.get('content-type')), `${method} ${path.slice(0, 60)} -> ${res.status}`).toMatch(/application\/json/);
      }
    }
    expect(statuses.filter((s) => s >= 400).length).toBeGreaterThan(40);
    const after = (await client.request('GET', USERS, { token: acct.ownerKey })).body.pagination.total_count;
    expect(after).toBe(before);
    expect((await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey })).body.name).toBe('member person');
  });

  it('answers 413 payload_too_large for a 2 MiB body, in each interface envelope', async () => {
    const acct = await createTestAccount();
    const body = JSON.stringify({ email: 'big@example.com', name: 'x'.repeat(2 * 1024 * 1024) });
    const pb = await client.request('POST', USERS, { token: acct.ownerKey, rawBody: body });
    expect(pb.status).toBe(413);
    expect(pb.body.error.code).toBe('payload_too_large');
    const hd = await client.request('POST', '/helpdesk/api/v1/tickets', { token: acct.ownerKey, rawBody: body });
    expect(hd.status).toBe(413);
    expect(hd.body).toEqual({ success: false, error: { code: 'PAYLOAD_TOO_LARGE', message: expect.any(String) } });
  });

  it('answers unknown routes with a JSON 404 in the envelope of their prefix', async () => {
    const acct = await createTestAccount();
    const pb = await client.request('GET', '/playbook/api/v1/nothing-here', { token: acct.ownerKey });
    expect(pb.status).toBe(404);
    expect(pb.body).toEqual({ error: { code: 'resource_not_found', message: expect.any(String) } });
    const hd = await client.request('POST', '/helpdesk/api/v1/tickets/x/y/z');
    expect(hd.status).toBe(404);
    expect(hd.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
    const wrongMethod = await client.request('PUT', USERS, { token: acct.ownerKey });
    expect(wrongMethod.status).toBe(404);
  });
});
