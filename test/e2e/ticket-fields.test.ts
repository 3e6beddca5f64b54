/** Ticket fields: the system fields, create, update and delete of custom fields, and who may do which. */
import { beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, FIELD_TYPES, FIELDS, newField, nineFieldSpecs, optionsPath, SYSTEM_FIELD_IDS, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

let admin: Desk;
let member: Desk;
let viewer: Desk;

beforeAll(async () => {
  const acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  const [m, v] = await Promise.all([acct.addUser('member'), acct.addUser('viewer')]);
  member = as(client, m.key);
  viewer = as(client, v.key);
});

describe('system fields', () => {
  it('lists the seven system fields first, in order, on the first page', async () => {
    await newField(admin, { type: 'text', title: 'Early custom', position: 0 });

    const res = await admin.get(FIELDS);

    expect(res.status).toBe(200);
    expect(res.body.ticketFields.slice(0, 7).map((f: Json) => f.id)).toEqual([...SYSTEM_FIELD_IDS]);
    expect(res.body.ticketFields.slice(7).every((f: Json) => !f.id.startsWith('system_'))).toBe(true);
    expect(res.body.meta.pageSize).toBe(25);
  });

  it.each(SYSTEM_FIELD_IDS)('GET %s answers {ticketField} with that id', async (id) => {
    const res = await viewer.get(`${FIELDS}/${id}`);

    expect(res.status).toBe(200);
    expect(res.body.ticketField).toMatchObject({ id, active: true, title: expect.any(String), type: expect.any(String) });
  });

  it('system_status offers the five statuses as options', async () => {
    const res = await admin.get(`${FIELDS}/system_status`);

    expect(res.body.ticketField.options.map((o: Json) => o.value)).toEqual(['new', 'open', 'pending', 'resolved', 'closed']);
    expect(res.body.ticketField.options.every((o: Json) => /^opt_/.test(o.id))).toBe(true);
  });

  it.each(SYSTEM_FIELD_IDS)('PUT and DELETE on %s answer 422 SYSTEM_FIELD and change nothing', async (id) => {
    const before = await admin.get(`${FIELDS}/${id}`);

    const put = await admin.put(`${FIELDS}/${id}`, { ticketField: { title: 'Renamed' } });
    const del = await admin.del(`${FIELDS}/${id}`);

    for (const res of [put, del]) {
      expect(res.status).toBe(422);
      expect(res.body).toMatchObject({ success: false, error: { code: 'SYSTEM_FIELD', message: expect.any(String) } });
    }
    expect((await admin.get(`${FIELDS}/${id}`)).body).toEqual(before.body);
  });

  it('refuses adding options to a system field with 422 SYSTEM_FIELD', async () => {
    const res = await admin.post(optionsPath('system_priority'), { customFieldOption: { name: 'Meh', value: 'meh' } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('SYSTEM_FIELD');
  });

  it('answers 404 NOT_FOUND for an unknown system_ id', async () => {
    const res = await admin.get(`${FIELDS}/system_nope`);

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('POST /ticket_fields', () => {
  it.each(FIELD_TYPES)('creates a %s field: 201 {ticketField}', async (type) => {
    const spec = nineFieldSpecs()[type];

    const res = await admin.post(FIELDS, { ticketField: { title: `New ${type}`, fieldKey: `new_${type}`, description: 'd', requiredForAgents: false, ...spec } });

    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(['ticketField']);
    const f = res.body.ticketField;
    expect(f).toMatchObject({ title: `New ${type}`, fieldKey: `new_${type}`, type, description: 'd', active: true, requiredForAgents: false });
    expect(f.id).not.toMatch(/^system_/);
    if (type === 'dropdown' || type === 'multiselect') {
      expect(f.options.map((o: Json) => o.value)).toEqual((spec.options as Json[]).map((o) => o.value));
      for (const o of f.options) expect(o).toEqual({ id: expect.stringMatching(/^opt_/), name: expect.any(String), value: expect.any(String), default: false });
    } else expect(f.options).toBeNull();
    const got = (await admin.get(`${FIELDS}/${f.id}`)).body.ticketField;
    expect({ ...got, options: null }).toEqual({ ...f, options: null });
    if (f.options) expect(got.options).toEqual(expect.arrayContaining(f.options));
  });

  it('GET returns inline options in the order they were given at create', async () => {
    const values = ['zulu', 'alpha', 'mike', 'bravo', 'yankee', 'charlie', 'xray', 'delta', 'whiskey', 'echo'];
    const f = await newField(admin, { type: 'dropdown', options: values.map((v) => ({ name: v.toUpperCase(), value: v })) });

    const one = await admin.get(`${FIELDS}/${f.id}`);
    const list = await admin.get(optionsPath(f.id));

    expect(f.options.map((o: Json) => o.value)).toEqual(values);
    expect(one.body.ticketField.options.map((o: Json) => o.value)).toEqual(values);
    expect(list.body.customFieldOptions.map((o: Json) => o.value)).toEqual(values);
  });

  it('refuses a fieldKey already used in the account (case-insensitively) with 409 CONFLICT (decisions §3: duplicates are CONFLICT)', async () => {
    const first = await newField(admin, { type: 'text', fieldKey: 'dup_key' });

    const res = await admin.post(FIELDS, { ticketField: { title: 'Second', type: 'text', fieldKey: 'DUP_KEY' } });

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('CONFLICT');
    expect((await admin.get(`${FIELDS}/${first.id}`)).status).toBe(200);
  });

  it('creates two fields with the same title when no fieldKey is given (titles are not unique)', async () => {
    const first = await admin.post(FIELDS, { ticketField: { title: 'Customer tier', type: 'text' } });

    const second = await admin.post(FIELDS, { ticketField: { title: 'Customer tier', type: 'number' } });

    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.ticketField.fieldKey).not.toBe(first.body.ticketField.fieldKey);
  });

  it('refuses an unknown type with 422 VALIDATION_ERROR', async () => {
    const res = await admin.post(FIELDS, { ticketField: { title: 'x', type: 'colour' } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: Json) => d.field)).toContain('type');
  });

  it.each([
    ['an empty object', {}],
    ['a string wrapper', { ticketField: 'x' }],
  ])('answers 400 BAD_REQUEST for %s instead of the ticketField object', async (_label, body) => {
    const res = await admin.post(FIELDS, body);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 400 BAD_REQUEST for malformed JSON and for no body at all', async () => {
    const malformed = await admin.raw('POST', FIELDS, '{"ticketField":');
    const none = await admin.raw('POST', FIELDS, '');

    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('BAD_REQUEST');
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('BAD_REQUEST');
  });
});

describe('PUT /ticket_fields/:id', () => {
  it('refuses changing type with 422 IMMUTABLE_FIELD', async () => {
    const f = await newField(admin, { type: 'text', fieldKey: 'imm_type' });

    const res = await admin.put(`${FIELDS}/${f.id}`, { ticketField: { type: 'number' } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('IMMUTABLE_FIELD');
    expect((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField.type).toBe('text');
  });

  it('refuses changing fieldKey with 422 IMMUTABLE_FIELD', async () => {
    const f = await newField(admin, { type: 'text', fieldKey: 'imm_key' });

    const res = await admin.put(`${FIELDS}/${f.id}`, { ticketField: { fieldKey: 'other_key', title: 'Changed' } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('IMMUTABLE_FIELD');
    expect((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField).toMatchObject({ fieldKey: 'imm_key', title: f.title });
  });

  it('accepts the same type and fieldKey along with other changes', async () => {
    const f = await newField(admin, { type: 'checkbox', fieldKey: 'same_vals' });

    const res = await admin.put(`${FIELDS}/${f.id}`, {
      ticketField: { type: 'checkbox', fieldKey: 'same_vals', title: 'Retitled', description: 'now described', requiredForAgents: true, active: false },
    });

    expect(res.status).toBe(200);
    expect(res.body.ticketField).toMatchObject({ id: f.id, type: 'checkbox', fieldKey: 'same_vals', title: 'Retitled', description: 'now described', requiredForAgents: true, active: false });
    expect((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField).toEqual(res.body.ticketField);
  });

  it('answers 400 BAD_REQUEST without the ticketField wrapper', async () => {
    const f = await newField(admin, { type: 'text' });

    const res = await admin.put(`${FIELDS}/${f.id}`, { title: 'x' });

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it('answers 404 NOT_FOUND for an unknown field', async () => {
    const res = await admin.put(`${FIELDS}/fld_nope`, { ticketField: { title: 'x' } });

    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });
});

describe('DELETE /ticket_fields/:id', () => {
  it('answers 204, after which GET and DELETE are 404 NOT_FOUND', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'A', value: 'a' }] });

    const res = await admin.del(`${FIELDS}/${f.id}`);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const after of [await admin.get(`${FIELDS}/${f.id}`), await admin.del(`${FIELDS}/${f.id}`), await admin.get(optionsPath(f.id))]) {
      expect(after.status).toBe(404);
      expect(after.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
    }
  });

  it('frees the fieldKey for a new field', async () => {
    const f = await newField(admin, { type: 'text', fieldKey: 'reusable_key' });
    await admin.del(`${FIELDS}/${f.id}`);

    const res = await admin.post(FIELDS, { ticketField: { title: 'Again', type: 'number', fieldKey: 'reusable_key' } });

    expect(res.status).toBe(201);
  });
});

describe('permissions', () => {
  it.each([
    ['viewer', () => viewer],
    ['member', () => member],
  ])('refuses %s writes to fields and options with 403 FORBIDDEN', async (_role, who) => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'A', value: 'a' }] });
    const d = who();

    const results = [
      await d.post(FIELDS, { ticketField: { title: 'nope', type: 'text' } }),
      await d.put(`${FIELDS}/${f.id}`, { ticketField: { title: 'nope' } }),
      await d.del(`${FIELDS}/${f.id}`),
      await d.post(optionsPath(f.id), { customFieldOption: { name: 'B', value: 'b' } }),
      await d.put(`${optionsPath(f.id)}/${f.options[0].id}`, { customFieldOption: { name: 'nope' } }),
      await d.del(`${optionsPath(f.id)}/${f.options[0].id}`),
    ];

    for (const res of results) {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ success: false, error: { code: 'FORBIDDEN' } });
    }
    expect((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField).toEqual(f);
  });

  it('lets a viewer read fields and options', async () => {
    const f = await newField(admin, { type: 'multiselect', options: [{ name: 'A', value: 'a' }] });

    const list = await viewer.get(FIELDS);
    const one = await viewer.get(`${FIELDS}/${f.id}`);
    const opts = await viewer.get(optionsPath(f.id));
    const opt = await viewer.get(`${optionsPath(f.id)}/${f.options[0].id}`);

    expect([list.status, one.status, opts.status, opt.status]).toEqual([200, 200, 200, 200]);
  });

  it("answers 404 for another account's field", async () => {
    const f = await newField(admin, { type: 'text' });
    const other = as(client, (await createTestAccount()).ownerKey);

    const get = await other.get(`${FIELDS}/${f.id}`);
    const put = await other.put(`${FIELDS}/${f.id}`, { ticketField: { title: 'mine' } });
    const del = await other.del(`${FIELDS}/${f.id}`);

    const opts = await other.get(optionsPath(f.id));
    const addOpt = await other.post(optionsPath(f.id), { customFieldOption: { name: 'x', value: 'x' } });

    expect([get.status, put.status, del.status, opts.status, addOpt.status]).toEqual([404, 404, 404, 404, 404]);
  });
});
