import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, FIELD_TYPES, FIELDS, newField, newTicket, nineFieldSpecs, TICKETS, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

let admin: Desk;
const field: Record<string, Json> = {};

beforeAll(async () => {
  const acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  const specs = nineFieldSpecs();
  for (const type of FIELD_TYPES) field[type] = await newField(admin, { title: `My ${type}`, ...specs[type] });
});

type Type = (typeof FIELD_TYPES)[number];

const valid: [Type, unknown][] = [
  ['text', 'hello'],
  ['textarea', 'line one\nline two'],
  ['number', 42],
  ['number', -7],
  ['decimal', 3.25],
  ['decimal', 10],
  ['checkbox', true],
  ['checkbox', false],
  ['date', '2024-02-29'],
  ['dropdown', 'gold'],
  ['multiselect', ['red', 'blue']],
  ['multiselect', []],
  ['regex', 'ABC-123'],
];

const invalid: [Type, unknown][] = [
  ['text', 42],
  ['text', ['a']],
  ['textarea', true],
  ['number', 4.5],
  ['number', '42'],
  ['decimal', '3.25'],
  ['decimal', 'abc'],
  ['checkbox', 'true'],
  ['checkbox', 1],
  ['date', '2023-02-29'],
  ['date', '2024/01/15'],
  ['date', '2024-01-15T10:00:00Z'],
  ['date', 20240115],
  ['dropdown', 'bronze'],
  ['dropdown', ['gold']],
  ['dropdown', 7],
  ['multiselect', 'red'],
  ['multiselect', ['red', 'purple']],
  ['multiselect', [1]],
  ['regex', 'abc-123'],
  ['regex', 'ABC-'],
  ['regex', 123],
];

describe('custom field values on tickets', () => {
  it.each(valid)('accepts a valid %s value %j on create', async (type, value) => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: field[type].id, value }] } });

    expect(res.status).toBe(201);
    expect(res.body.ticket.customFields).toEqual([{ id: field[type].id, value }]);
  });

  it.each(invalid)('refuses a %s value %j with 422 VALIDATION_ERROR and details', async (type, value) => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: field[type].id, value }] } });

    expect(res.status).toBe(422);
    expect(res.body.success).toBe(false);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(/^customFields/), message: expect.any(String) })]));
  });

  it.each(invalid.slice(0, 6))('refuses a %s value %j on PUT too, leaving the ticket unchanged', async (type, value) => {
    const t = await newTicket(admin);

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: field[type].id, value }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect((await admin.get(`${TICKETS}/${t.id}`)).body.ticket.customFields).toEqual([]);
  });

  it('stores values of all nine types on one ticket and returns them on GET', async () => {
    const values: Record<Type, unknown> = { text: 't', textarea: 'ta', number: 1, decimal: 1.5, checkbox: true, date: '2025-12-31', dropdown: 'silver', multiselect: ['green'], regex: 'XYZ-9' };
    const customFields = FIELD_TYPES.map((type) => ({ id: field[type].id, value: values[type] }));

    const created = await admin.post(TICKETS, { ticket: { subject: 'all nine', customFields } });

    expect(created.status).toBe(201);
    const got = await admin.get(`${TICKETS}/${created.body.ticket.id}`);
    expect(got.body.ticket.customFields).toEqual(expect.arrayContaining(customFields));
    expect(got.body.ticket.customFields).toHaveLength(9);
  });

  it('refuses an unknown field id with 422 VALIDATION_ERROR', async () => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: 'fld_doesnotexist', value: 'x' }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details[0].field).toMatch(/^customFields/);
  });

  it("refuses another account's field id with 422 VALIDATION_ERROR", async () => {
    const other = await createTestAccount();
    const foreign = await newField(as(client, other.ownerKey), { type: 'text' });

    const res = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: foreign.id, value: 'x' }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a value for a system field id as a custom field with 422', async () => {
    const res = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: 'system_status', value: 'open' }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });

  it('refuses a new value for an inactive field with 422, on create and on PUT', async () => {
    const inactive = await newField(admin, { type: 'text', active: false });
    const t = await newTicket(admin);

    const created = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: inactive.id, value: 'x' }] } });
    const updated = await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: inactive.id, value: 'x' }] } });

    for (const res of [created, updated]) {
      expect(res.status).toBe(422);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
  });

  it('refuses new values once a field is deactivated by PUT', async () => {
    const f = await newField(admin, { type: 'number' });
    const before = await admin.post(TICKETS, { ticket: { subject: 'cf', customFields: [{ id: f.id, value: 1 }] } });
    expect(before.status).toBe(201);
    expect((await admin.put(`${FIELDS}/${f.id}`, { ticketField: { active: false } })).status).toBe(200);

    const res = await admin.put(`${TICKETS}/${before.body.ticket.id}`, { ticket: { customFields: [{ id: f.id, value: 2 }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect((await admin.get(`${TICKETS}/${before.body.ticket.id}`)).body.ticket.customFields).toEqual([{ id: f.id, value: 1 }]);
  });

  it('PUT merges customFields by id: other values stay, a given one changes, a null one clears', async () => {
    const t = await newTicket(admin, {
      customFields: [
        { id: field.text.id, value: 'keep me' },
        { id: field.number.id, value: 1 },
        { id: field.checkbox.id, value: true },
      ],
    });

    const changed = await admin.put(`${TICKETS}/${t.id}`, {
      ticket: {
        customFields: [
          { id: field.number.id, value: 2 },
          { id: field.date.id, value: '2024-01-01' },
        ],
      },
    });
    const cleared = await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: field.checkbox.id, value: null }] } });

    expect(changed.status).toBe(200);
    expect(changed.body.ticket.customFields).toHaveLength(4);
    expect(changed.body.ticket.customFields).toEqual(
      expect.arrayContaining([
        { id: field.text.id, value: 'keep me' },
        { id: field.number.id, value: 2 },
        { id: field.checkbox.id, value: true },
        { id: field.date.id, value: '2024-01-01' },
      ]),
    );
    expect(cleared.status).toBe(200);
    expect(cleared.body.ticket.customFields).toHaveLength(3);
    expect(cleared.body.ticket.customFields.map((c: Json) => c.id)).not.toContain(field.checkbox.id);
    expect((await admin.get(`${TICKETS}/${t.id}`)).body.ticket.customFields).toEqual(cleared.body.ticket.customFields);
  });

  it('PUT without customFields leaves them untouched', async () => {
    const t = await newTicket(admin, { customFields: [{ id: field.text.id, value: 'stay' }] });

    const res = await admin.put(`${TICKETS}/${t.id}`, { ticket: { priority: 'high' } });

    expect(res.body.ticket.customFields).toEqual([{ id: field.text.id, value: 'stay' }]);
  });
});

describe('requiredForAgents fields', () => {
  let desk: Desk;
  let required: Json;
  beforeAll(async () => {
    // Own account: a required field would affect every other ticket create.
    desk = as(client, (await createTestAccount()).ownerKey);
    required = await newField(desk, { type: 'text', title: 'Order number', requiredForAgents: true });
  });

  it('refuses a create without a value with 422 VALIDATION_ERROR', async () => {
    const res = await desk.post(TICKETS, { ticket: { subject: 'no order number' } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(/^customFields/) })]));
  });

  it('accepts a create with a value', async () => {
    const res = await desk.post(TICKETS, { ticket: { subject: 'has order number', customFields: [{ id: required.id, value: 'A-1' }] } });

    expect(res.status).toBe(201);
    expect(res.body.ticket.customFields).toEqual([{ id: required.id, value: 'A-1' }]);
  });

  it('stops being required once the field is inactive', async () => {
    const desk2 = as(client, (await createTestAccount()).ownerKey);
    const f = await newField(desk2, { type: 'text', requiredForAgents: true });
    expect((await desk2.put(`${FIELDS}/${f.id}`, { ticketField: { active: false } })).status).toBe(200);

    const res = await desk2.post(TICKETS, { ticket: { subject: 'x' } });

    expect(res.status).toBe(201);
  });
});
