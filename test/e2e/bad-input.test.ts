import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, uniqueEmail, useGateway, type Response, type TestAccount } from '../support/api.ts';
import { expectUserError, rawHttp, USERS } from '../support/users.ts';

const gw = useGateway();
const { client } = gw;

const HUGE = 'x'.repeat(100_000);
const LONG_ID = 'u'.repeat(10_000);
const TEN_K = 'q'.repeat(10_000);
const TWO_MIB = JSON.stringify({ email: 'big@example.com', name: 'x'.repeat(2 * 1024 * 1024) });

/** Emails used only in requests that must fail; afterwards each must still be free. */
const STORM_EMAILS = Array.from({ length: 4 }, (_, i) => `storm.${process.pid}.${Date.now()}.${i}@example.com`);

/** Bodies that are not a JSON object: 400 validation_error on POST and PATCH. */
const NOT_OBJECTS = [
  '{',
  '{"email": }',
  '{"email":"a@b.co",}',
  "{'email':'a@b.co'}",
  '[]',
  `[{"email":"${STORM_EMAILS[0]}","name":"A"}]`,
  'null',
  '0',
  '-1',
  '1e999',
  'true',
  '"string"',
  '\u0000',
  '\ufeff{}x',
  '['.repeat(5_000) + ']'.repeat(5_000),
  'NaN',
  'undefined',
];

/** Objects with wrong values: 400 validation_error on POST (nothing created). */
const BAD_OBJECTS = [
  '{}',
  '{"email":null,"name":null,"role":null,"status":null}',
  '{"email":123,"name":{},"role":[],"send_invitation":"no"}',
  `{"email":"${HUGE}@example.com","name":"${HUGE}"}`,
  `{"email":"${STORM_EMAILS[1]}","name":"\\u0000\\ud800\\uffff","role":"member"}`,
  `{"email":"${STORM_EMAILS[2]}","name":"ok","role":"owner"}`,
  `{"email":"${STORM_EMAILS[3]}","name":"${HUGE}"}`,
  JSON.stringify({ email: 'not-an-email', name: 'Deep', extra: JSON.parse('{"a":'.repeat(2_000) + '1' + '}'.repeat(2_000)) }),
  '{"email":"a@b.co","name":"x","name":"y","email":"nope"}',
];

let acct: TestAccount;
let member: { id: string; key: string };
let memberBefore: Response;
let countBefore: number;

const count = async () => (await client.request('GET', `${USERS}?limit=100`, { token: acct.ownerKey })).body.pagination.total_count as number;

function expectNo5xxJson(res: { status: number; headers: Headers | Record<string, unknown>; text: string }, label: string) {
  expect(res.status, `${label} -> ${res.status} ${res.text.slice(0, 200)}`).toBeLessThan(500);
  const ct = res.headers instanceof Headers ? res.headers.get('content-type') : (res.headers['content-type'] as string | undefined);
  if (res.status !== 204) expect(String(ct), `${label}: content type`).toMatch(/application\/json/);
}

beforeAll(async () => {
  acct = await createTestAccount();
  member = await acct.addUser('member');
  memberBefore = await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey });
  countBefore = await count();
});

describe('bad input on every user endpoint never produces a 5xx', () => {
  it.each(['POST', 'PATCH'])('%s with a body that is not a JSON object answers 400 validation_error', async (method) => {
    for (const rawBody of NOT_OBJECTS) {
      const path = method === 'POST' ? USERS : `${USERS}/${member.id}`;
      const res = await client.request(method, path, { token: acct.ownerKey, rawBody });
      expectNo5xxJson(res, `${method} ${rawBody.slice(0, 40)}`);
      expect(res.status, `${method} ${rawBody.slice(0, 40)}`).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
  });

  it('POST with wrong or odd values answers 400 validation_error and creates nothing', async () => {
    for (const rawBody of BAD_OBJECTS) {
      const res = await client.request('POST', USERS, { token: acct.ownerKey, rawBody });
      expectNo5xxJson(res, `POST ${rawBody.slice(0, 60)}`);
      expect(res.status, `POST ${rawBody.slice(0, 60)}`).toBe(400);
      expect(res.body.error.code).toBe('validation_error');
    }
  });

  it.each([
    ['email', [null, 123, true, [], {}, '', HUGE, 'a@b@c', '<script>@x.com']],
    ['name', [null, 123, false, [], { first: 'a' }, '', HUGE, 'tab\there', 'nul\u0000']],
    ['role', [null, 1, true, ['admin'], { role: 'admin' }, '', 'owner', 'Admin', HUGE]],
    ['send_invitation', [null, 'true', 1, 0, [], {}]],
  ] as const)('POST with a wrong %s answers 400 validation_error naming that field', async (field, values) => {
    for (const value of values) {
      const body = { email: uniqueEmail('typed'), name: 'Typed', [field]: value };
      const res = await client.request('POST', USERS, { token: acct.ownerKey, body });
      expectUserError(res, 400, 'validation_error', field);
    }
  });

  it.each([
    ['name', [null, 123, true, [], {}, '', '   ', HUGE, 'line\nbreak']],
    ['role', [null, 1, [], {}, '', 'superuser', HUGE]],
    ['status', [null, 1, true, [], '', 'invited', 'ACTIVE', HUGE]],
  ] as const)('PATCH with a wrong %s answers 400 validation_error naming that field', async (field, values) => {
    for (const value of values) {
      const res = await client.request('PATCH', `${USERS}/${member.id}`, { token: acct.ownerKey, body: { [field]: value } });
      expectUserError(res, 400, 'validation_error', field);
    }
  });

  it('a 10,000-character user id in the path answers 404 resource_not_found on GET, PATCH and DELETE', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await client.request(method, `${USERS}/${LONG_ID}`, { token: acct.ownerKey, body: method === 'PATCH' ? { name: 'X' } : undefined });
      expectUserError(res, 404, 'resource_not_found');
    }
  });

  it.each([['../../etc/passwd'], ['%00'], ['usr_🙂'], ["usr_' OR '1'='1"], ['USR_' + 'A'.repeat(26)], ['%E2%80%AE']])(
    'an odd user id %s answers 404 in the user-management envelope on GET, PATCH and DELETE',
    async (id) => {
      const path = `${USERS}/${encodeURIComponent(id)}`;
      for (const method of ['GET', 'PATCH', 'DELETE']) {
        const res = await client.request(method, path, { token: acct.ownerKey, body: method === 'PATCH' ? { name: 'X' } : undefined });
        expectUserError(res, 404, 'resource_not_found');
      }
    },
  );

  it('a malformed percent-encoding in the path answers a JSON 404, never a 5xx', async () => {
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await client.request(method, `${USERS}/%ZZ%E0%A4%A`, { token: acct.ownerKey });
      expectNo5xxJson(res, `${method} %ZZ`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_not_found');
    }
  });

  it.each([
    ['limit', 'limit'],
    ['search', 'search'],
    ['role', 'role'],
    ['status', 'status'],
    ['sort', 'sort'],
    ['order', 'order'],
  ])('a 10,000-character %s query value answers 400 validation_error naming it', async (param, field) => {
    const res = await client.request('GET', `${USERS}?${param}=${param === 'limit' ? '9'.repeat(10_000) : TEN_K}`, { token: acct.ownerKey });
    expectUserError(res, 400, 'validation_error', field);
  });

  it('a 10,000-character cursor answers 400', async () => {
    const res = await client.request('GET', `${USERS}?cursor=${TEN_K}`, { token: acct.ownerKey });
    expect(res.status).toBe(400);
    expect(['validation_error', 'invalid_cursor']).toContain(res.body.error.code);
  });

  it('odd query strings never produce a 5xx', async () => {
    const queries = [
      'limit=1&limit=2',
      'limit[]=3',
      'role[]=admin',
      'search=%F0%9F%99%82',
      'search=%25',
      'search=%',
      'search=%00',
      'search=' + encodeURIComponent('\u202Eevil'),
      'cursor=',
      'cursor=%20',
      'sort=',
      'unknown=1',
      '&&&',
      '=',
      'search=' + encodeURIComponent('"; DROP TABLE users; --'),
      'search=' + encodeURIComponent('contains(#x)'),
    ];
    for (const q of queries) {
      const res = await client.request('GET', `${USERS}?${q}`, { token: acct.ownerKey });
      expectNo5xxJson(res, `GET ?${q}`);
    }
  });

  it('unicode names (emoji, CJK, right-to-left scripts, zero-width joiners, combining marks) are stored and answered unchanged', async () => {
    // Right-to-left text itself is a name; the bidirectional controls (U+202E, ...) are not (next test).
    const names = ['Zoë 🙂 Ωmega', '山田 太郎', 'مرحبا بالعالم', 'שלום עולם', 'Family 👨\u200D👩\u200D👧', 'e\u0301\u0301\u0301', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢'];
    for (const name of names) {
      const created = await client.request('POST', USERS, { token: acct.ownerKey, body: { email: uniqueEmail('uni'), name, send_invitation: false } });
      expect(created.status, JSON.stringify(name)).toBe(201);
      const fetched = await client.request('GET', `${USERS}/${created.body.id}`, { token: acct.ownerKey });
      expect(fetched.body.name).toBe(name);
      expect((await client.request('DELETE', `${USERS}/${created.body.id}`, { token: acct.ownerKey })).status).toBe(204);
    }
  });

  it('control characters, bidirectional controls and lone surrogates in a name answer 400 validation_error (field name)', async () => {
    const bidi = ['"a\\u202Eb"', '"a\\u200Eb"', '"a\\u200Fb"', '"a\\u202Ab"', '"a\\u2066b"', '"a\\u2069b"', '"a\\u061Cb"', '"report\\u202E\\ud800fdp.exe"'];
    for (const raw of ['"bell\\u0007"', '"nul\\u0000"', '"lone \\ud800 surrogate"', '"lone \\ude00 low"', '"del\\u007f"', '"esc\\u001b[31m"', ...bidi]) {
      const res = await client.request('POST', USERS, { token: acct.ownerKey, rawBody: `{"email":"${uniqueEmail('ctl')}","name":${raw}}` });
      expectUserError(res, 400, 'validation_error', 'name');
    }
  });

  it('unicode and odd emails never produce a 5xx, and an accepted one round-trips', async () => {
    for (const email of ['üser@exämple.com', 'a@xn--exmple-cua.com', '"quoted"@example.com', 'a+tag@example.com', 'A@B.CO', `${'l'.repeat(64)}@example.com`, 'a@' + 'd'.repeat(250) + '.com']) {
      const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'Mail', send_invitation: false } });
      expectNo5xxJson(res, `POST ${email}`);
      expect([201, 400, 409]).toContain(res.status);
      if (res.status === 201) {
        expect(res.body.email.toLowerCase()).toBe(email.toLowerCase());
        expect((await client.request('DELETE', `${USERS}/${res.body.id}`, { token: acct.ownerKey })).status).toBe(204);
      }
    }
  });

  it('bodies on GET and DELETE are ignored or refused, never a 5xx (raw HTTP)', async () => {
    const headers = { Authorization: `Bearer ${acct.ownerKey}`, 'Content-Type': 'application/json' };
    for (const [method, path] of [
      ['GET', USERS],
      ['GET', `${USERS}/me`],
      ['GET', `${USERS}/${member.id}`],
      ['DELETE', `${USERS}/usr_01J000000000000000000NOONE`],
    ]) {
      for (const body of ['{', 'null', '[1,2]', '{"role":"owner"}']) {
        const res = await rawHttp(gw.url(), method, path, headers, body);
        expectNo5xxJson(res, `${method} ${path} with body ${body}`);
        if (method === 'GET') expect(res.status).toBe(200);
      }
    }
  });

  it('a POST with no content type or a text/plain one is still read as JSON or refused, never a 5xx', async () => {
    const res = await rawHttp(gw.url(), 'POST', USERS, { Authorization: `Bearer ${acct.ownerKey}`, 'Content-Type': 'text/plain' }, '{"email":"not an email","name":"x"}');
    expectNo5xxJson(res, 'POST text/plain');
    expect(res.status).toBe(400);
  });

  it.each([
    ['POST', '/users', ''],
    ['PATCH', '/users/{user_id}', '/{member}'],
    ['DELETE', '/users/{user_id}', '/{member}'],
    ['GET', '/users', ''],
    ['GET', '/users/me', '/me'],
  ])('a 2 MiB body on %s %s answers 413 payload_too_large', async (method, _label, suffix) => {
    const path = `${USERS}${suffix.replace('{member}', member.id)}`;
    const res = await rawHttp(gw.url(), method, path, { Authorization: `Bearer ${acct.ownerKey}`, 'Content-Type': 'application/json' }, TWO_MIB);
    expect(res.status, res.text.slice(0, 200)).toBe(413);
    expect(JSON.parse(res.text)).toEqual({ error: { code: 'payload_too_large', message: expect.any(String) } });
  });

  it('a body of exactly 1 MiB is not refused as too large (the limit is "over 1 MiB")', async () => {
    const prefix = '{"email":"not-an-email","name":"';
    const body = prefix + 'x'.repeat(1024 * 1024 - prefix.length - 2) + '"}';
    expect(Buffer.byteLength(body)).toBe(1024 * 1024);
    const res = await client.request('POST', USERS, { token: acct.ownerKey, rawBody: body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_error');
  });

  it('prototype keys in a body do not grant a role', async () => {
    const res = await client.request('POST', USERS, {
      token: member.key,
      rawBody: `{"email":"${uniqueEmail('proto')}","name":"Proto","__proto__":{"role":"admin"},"constructor":{"prototype":{"role":"admin"}}}`,
    });
    expectNo5xxJson(res, 'POST __proto__');
    if (res.status === 201) {
      expect(res.body.role).toBe('member');
      expect((await client.request('DELETE', `${USERS}/${res.body.id}`, { token: acct.ownerKey })).status).toBe(204);
    }
  });
});

describe('unknown routes', () => {
  it.each(['/playbook/api/v1/nothing-here', '/playbook/api/v1/users/me/extra', `/playbook/api/v1/users/x/y/z`, '/playbook/api/v2/users', '/playbook/api/v1', '/playbook/anything'])(
    '%s answers 404 {error: {code: "resource_not_found"}}, with or without credentials',
    async (path) => {
      for (const token of [acct.ownerKey, undefined]) {
        expectUserError(await client.request('GET', path, { token }), 404, 'resource_not_found');
        expectUserError(await client.request('POST', path, { token, body: {} }), 404, 'resource_not_found');
      }
    },
  );

  it.each(['PUT', 'HEAD', 'OPTIONS'])('%s /playbook/api/v1/users (a method the interface does not have) answers 404, never a 5xx', async (method) => {
    const res = await rawHttp(gw.url(), method, USERS, { Authorization: `Bearer ${acct.ownerKey}` });
    expect(res.status).toBe(404);
    if (method !== 'HEAD') expect(JSON.parse(res.text)).toEqual({ error: { code: 'resource_not_found', message: expect.any(String) } });
  });

  it.each(['/helpdesk/api/nothing-here', '/helpdesk/api/v1/nothing', '/helpdesk/api/v1/tickets/x/y/z', '/helpdesk/api'])(
    '%s answers 404 {success: false, error: {code: "NOT_FOUND"}}',
    async (path) => {
      for (const token of [acct.ownerKey, undefined]) {
        const res = await client.request('GET', path, { token });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.any(String) } });
      }
    },
  );
});

describe('after the bad-input storm', () => {
  it('nothing was half-written: same user count, the member unchanged, and the emails of refused requests are still free', async () => {
    expect(await count()).toBe(countBefore);
    const memberAfter = await client.request('GET', `${USERS}/${member.id}`, { token: acct.ownerKey });
    expect(memberAfter.body).toEqual(memberBefore.body);
    for (const email of STORM_EMAILS) {
      const res = await client.request('POST', USERS, { token: acct.ownerKey, body: { email, name: 'Now valid', send_invitation: false } });
      expect(res.status, email).toBe(201);
    }
  });
});
