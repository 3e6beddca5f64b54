import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, it } from 'vitest';
import { ddb, tableName } from '#shared/db/client.ts';
import { toHttpError } from '#shared/http/error-map.ts';
import { checkValue, loadPatternsFor } from '#shared/ticket-fields/values.ts';
import type { FieldRecord } from '#shared/ticket-fields/api.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, FIELDS, newField, newTicket, TICKETS, type Desk } from '../support/desk.ts';

const { client } = useGateway();
let admin: Desk;
let accountId: string;

beforeAll(async () => {
  const acct = await createTestAccount();
  accountId = acct.accountId;
  admin = as(client, acct.ownerKey);
});

const expect422 = (res: { status: number; text: string; body: any }, field?: string) => {
  expect(res.status, res.text).toBe(422);
  expect(res.body.error.code).toBe('VALIDATION_ERROR');
  if (field) expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
};

describe('regex fields use RE2 (decisions §6)', () => {
  it('a pattern RE2 cannot compile is 422 at create and at update; a valid pattern matches as before', async () => {
    for (const regexPattern of ['^(?=a)b$', '(a)\\1', '(?<!x)y', 'a{1001}', '[']) {
      expect422(await admin.post(FIELDS, { ticketField: { title: 'Bad', type: 'regex', regexPattern } }), 'regexPattern');
    }
    const f = await newField(admin, { type: 'regex', regexPattern: '^[A-Z]{3}-[0-9]{3}$' });
    expect422(await admin.put(`${FIELDS}/${f.id}`, { ticketField: { regexPattern: '(?=x)' } }), 'regexPattern');

    expect((await admin.post(TICKETS, { ticket: { subject: 'ok', customFields: [{ id: f.id, value: 'ABC-123' }] } })).status).toBe(201);
    expect422(await admin.post(TICKETS, { ticket: { subject: 'no', customFields: [{ id: f.id, value: 'ABC-1234' }] } }));
  });

  it('200 checks of a pattern that is catastrophic for backtracking engines cost linear time and give the right answers', async () => {
    const field = { id: 'f', fieldType: 'regex', regexPattern: '^(a+)+$' } as FieldRecord;
    await loadPatternsFor([{ id: 'f', value: 'a' }], new Map([['f', field]]));
    const start = process.cpuUsage();
    for (let i = 0; i < 100; i++) {
      expect(checkValue(field, `${'a'.repeat(9_999)}b`)).toBe('must match ^(a+)+$');
      expect(checkValue(field, 'a'.repeat(10_000))).toBeNull();
    }
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(5_000);
  });
});

describe('inputs that become part of a key are bounded before the store', () => {
  it('a dropdown or multiselect value longer than any option is 422, not 500 (create and update)', async () => {
    const dd = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    const ms = await newField(admin, { type: 'multiselect', options: [{ name: 'Red', value: 'red' }] });
    const t = await newTicket(admin);
    for (const long of ['x'.repeat(5_000), '😀'.repeat(300)]) {
      expect422(await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: dd.id, value: long }] } }));
      expect422(await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: ms.id, value: ['red', long] }] } }));
      expect422(await admin.post(TICKETS, { ticket: { subject: 's', customFields: [{ id: dd.id, value: long }] } }));
    }
    expect(
      (
        await admin.put(`${TICKETS}/${t.id}`, {
          ticket: {
            customFields: [
              { id: dd.id, value: 'gold' },
              { id: ms.id, value: ['red'] },
            ],
          },
        })
      ).status,
    ).toBe(200);
  });

  it('a contact lookup by an email no contact can have answers data null', async () => {
    const res = await admin.get(`/helpdesk/api/contacts/by-email/${encodeURIComponent(`${'😀'.repeat(300)}@x.example`)}`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, data: null });
  });

  it("the store's key-size ValidationException maps to 422; any other ValidationException stays a 500", async () => {
    const tooLong = await ddb.send(new GetCommand({ TableName: tableName(), Key: { pk: `A#${accountId}`, sk: 'x'.repeat(1_100) } })).catch((e: Error) => e);
    expect((tooLong as Error).name, (tooLong as Error).message).toBe('ValidationException');
    expect(toHttpError(tooLong, 'helpdesk')).toMatchObject({ status: 422, body: { success: false, error: { code: 'VALIDATION_ERROR' } } });
    expect(toHttpError(tooLong, 'playbook').status).toBe(400);

    const bug = await ddb.send(new UpdateCommand({ TableName: tableName(), Key: { pk: `A#${accountId}`, sk: 'ACCOUNT' }, UpdateExpression: 'SET #a = :missing' })).catch((e: Error) => e);
    expect((bug as Error).name).toBe('ValidationException');
    expect(toHttpError(bug, 'helpdesk').status).toBe(500);
  });
});

describe('tags (decisions §6)', () => {
  it('duplicates are dropped keeping the first, tags are kept as given, emoji count as one character', async () => {
    const emoji64 = '🙂'.repeat(64);
    const t = await newTicket(admin, { tags: ['b', 'a', 'b', 'Ä', 'a', emoji64] });
    expect(t.tags).toEqual(['b', 'a', 'Ä', emoji64]);
    const many = Array.from({ length: 150 }, (_, i) => `t${i % 100}`);
    expect((await newTicket(admin, { tags: many })).tags).toHaveLength(100);
  });

  it('whitespace, commas, empty, over 64 characters and over 100 distinct tags are 422', async () => {
    for (const tags of [['a b'], [' a'], ['a\t'], ['a,b'], [''], ['x'.repeat(65)], ['🙂'.repeat(65)], Array.from({ length: 101 }, (_, i) => `t${i}`)]) {
      const res = await admin.post(TICKETS, { ticket: { subject: 's', tags } });
      expect(res.status, `${JSON.stringify(tags).slice(0, 40)}: ${res.text}`).toBe(422);
    }
  });
});
