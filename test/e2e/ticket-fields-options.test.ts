import { beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '#shared/auth/principal.ts';
import { CreateTicketFieldBodySchema } from '#shared/ticket-fields/model.ts';
import * as fields from '#shared/ticket-fields/service.ts';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, FIELDS, newField, newTicket, optionsPath, statusCounts, TICKETS, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

let admin: Desk;
let owner: Principal;

beforeAll(async () => {
  const acct = await createTestAccount();
  admin = as(client, acct.ownerKey);
  owner = { accountId: acct.accountId, userId: acct.ownerId, role: 'owner', plan: 'enterprise', credential: 'api_key' };
});

const opt = (name: string, value: string, isDefault?: boolean) => ({ customFieldOption: { name, value, ...(isDefault === undefined ? {} : { default: isDefault }) } });
const defaults = (options: Json[]) => options.filter((o) => o.default).map((o) => o.value);

describe('option CRUD', () => {
  it('creates an option: 201 {customFieldOption} with an opt_ id and default false', async () => {
    const f = await newField(admin, { type: 'dropdown' });

    const res = await admin.post(optionsPath(f.id), opt('Gold', 'gold'));

    expect(res.status).toBe(201);
    expect(res.body).toEqual({ customFieldOption: { id: expect.stringMatching(/^opt_/), name: 'Gold', value: 'gold', default: false } });
  });

  it('lists {customFieldOptions} and reads one option by id', async () => {
    const f = await newField(admin, { type: 'multiselect', options: [{ name: 'A', value: 'a' }] });
    const added = (await admin.post(optionsPath(f.id), opt('B', 'b'))).body.customFieldOption;

    const list = await admin.get(optionsPath(f.id));
    const one = await admin.get(`${optionsPath(f.id)}/${added.id}`);

    expect(list.status).toBe(200);
    expect(Object.keys(list.body)).toEqual(['customFieldOptions']);
    expect(list.body.customFieldOptions).toEqual([f.options[0], added]);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ customFieldOption: added });
    expect((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField.options).toEqual([f.options[0], added]);
  });

  it('updates an option name and value: 200 {customFieldOption}', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Old', value: 'old' }] });

    const res = await admin.put(`${optionsPath(f.id)}/${f.options[0].id}`, opt('New', 'new'));

    expect(res.status).toBe(200);
    expect(res.body.customFieldOption).toEqual({ id: f.options[0].id, name: 'New', value: 'new', default: false });
    expect((await admin.get(`${optionsPath(f.id)}/${f.options[0].id}`)).body.customFieldOption).toEqual(res.body.customFieldOption);
  });

  it('frees the old value when an option value changes', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Old', value: 'old' }] });
    await admin.put(`${optionsPath(f.id)}/${f.options[0].id}`, opt('New', 'new'));

    const reuse = await admin.post(optionsPath(f.id), opt('Old again', 'old'));
    const taken = await admin.post(optionsPath(f.id), opt('New twice', 'new'));

    expect(reuse.status).toBe(201);
    expect(taken.status).toBe(409);
    expect(taken.body.error.code).toBe('DUPLICATE_OPTION_VALUE');
  });

  it('deletes an option: 204, then GET is 404 and the list no longer has it', async () => {
    const f = await newField(admin, {
      type: 'dropdown',
      options: [
        { name: 'A', value: 'a' },
        { name: 'B', value: 'b' },
      ],
    });
    const [a, b] = f.options;

    const res = await admin.del(`${optionsPath(f.id)}/${a.id}`);

    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    const gone = await admin.get(`${optionsPath(f.id)}/${a.id}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('NOT_FOUND');
    expect((await admin.get(optionsPath(f.id))).body.customFieldOptions).toEqual([b]);
  });

  it('answers 404 NOT_FOUND for an unknown option and for options of an unknown field', async () => {
    const f = await newField(admin, { type: 'dropdown' });

    const results = [
      await admin.get(`${optionsPath(f.id)}/opt_nope`),
      await admin.put(`${optionsPath(f.id)}/opt_nope`, opt('x', 'x')),
      await admin.del(`${optionsPath(f.id)}/opt_nope`),
      await admin.get(optionsPath('fld_nope')),
      await admin.post(optionsPath('fld_nope'), opt('x', 'x')),
    ];

    for (const res of results) {
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('NOT_FOUND');
    }
  });

  it.each([
    ['an empty object', {}],
    ['a string wrapper', { customFieldOption: 'x' }],
  ])('answers 400 BAD_REQUEST for %s instead of the customFieldOption object', async (_label, body) => {
    const f = await newField(admin, { type: 'dropdown' });

    const res = await admin.post(optionsPath(f.id), body);

    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('BAD_REQUEST');
  });

  it.each([
    ['an empty name', { name: '', value: 'v' }, 'name'],
    ['a value with spaces', { name: 'n', value: 'has space' }, 'value'],
    ['no value', { name: 'n' }, 'value'],
  ])('answers 422 VALIDATION_ERROR for %s', async (_label, customFieldOption, field) => {
    const f = await newField(admin, { type: 'dropdown' });

    const res = await admin.post(optionsPath(f.id), { customFieldOption });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.map((d: Json) => d.field)).toContain(field);
  });
});

describe('option rules', () => {
  it('refuses a duplicate value with 409 DUPLICATE_OPTION_VALUE', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });

    const res = await admin.post(optionsPath(f.id), opt('Gold again', 'gold'));

    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ success: false, error: { code: 'DUPLICATE_OPTION_VALUE' } });
    expect((await admin.get(optionsPath(f.id))).body.customFieldOptions).toHaveLength(1);
  });

  it('refuses renaming an option to a value another option has with 409 DUPLICATE_OPTION_VALUE', async () => {
    const f = await newField(admin, {
      type: 'dropdown',
      options: [
        { name: 'A', value: 'a' },
        { name: 'B', value: 'b' },
      ],
    });

    const res = await admin.put(`${optionsPath(f.id)}/${f.options[1].id}`, opt('B', 'a'));

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('DUPLICATE_OPTION_VALUE');
  });

  it('refuses duplicate values inline at field create with 409 DUPLICATE_OPTION_VALUE', async () => {
    const res = await admin.post(FIELDS, {
      ticketField: {
        title: 'Dup',
        type: 'dropdown',
        options: [
          { name: 'A', value: 'a' },
          { name: 'A2', value: 'a' },
        ],
      },
    });

    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('DUPLICATE_OPTION_VALUE');
  });

  it('allows the same value on two different fields', async () => {
    const f1 = await newField(admin, { type: 'dropdown', options: [{ name: 'X', value: 'x' }] });
    const f2 = await newField(admin, { type: 'dropdown' });

    const res = await admin.post(optionsPath(f2.id), opt('X', 'x'));

    expect(f1.options).toHaveLength(1);
    expect(res.status).toBe(201);
  });

  it.each(['text', 'number', 'checkbox', 'date'])('refuses inline options on a %s field with 422 INVALID_FIELD_TYPE', async (type) => {
    const res = await admin.post(FIELDS, { ticketField: { title: `opts on ${type}`, type, options: [{ name: 'A', value: 'a' }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('INVALID_FIELD_TYPE');
  });

  it('takes an empty options list on a text field as no options (201)', async () => {
    const res = await admin.post(FIELDS, { ticketField: { title: 'no opts', type: 'text', options: [] } });

    expect(res.status).toBe(201);
    expect(res.body.ticketField.options).toBeNull();
  });

  it('refuses the options endpoint of a text field with 422 INVALID_FIELD_TYPE', async () => {
    const f = await newField(admin, { type: 'text' });

    const res = await admin.post(optionsPath(f.id), opt('A', 'a'));

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('INVALID_FIELD_TYPE');
  });

  it('makes a newly created default option the only default', async () => {
    const f = await newField(admin, {
      type: 'dropdown',
      options: [
        { name: 'A', value: 'a', default: true },
        { name: 'B', value: 'b' },
      ],
    });
    expect(defaults(f.options)).toEqual(['a']);

    const res = await admin.post(optionsPath(f.id), opt('C', 'c', true));

    expect(res.status).toBe(201);
    expect(res.body.customFieldOption.default).toBe(true);
    expect(defaults((await admin.get(optionsPath(f.id))).body.customFieldOptions)).toEqual(['c']);
    expect(defaults((await admin.get(`${FIELDS}/${f.id}`)).body.ticketField.options)).toEqual(['c']);
  });

  it('moves the default when an option is updated to default, and clears it when set to false', async () => {
    const f = await newField(admin, {
      type: 'multiselect',
      options: [
        { name: 'A', value: 'a', default: true },
        { name: 'B', value: 'b' },
      ],
    });
    const [a, b] = f.options;

    const moved = await admin.put(`${optionsPath(f.id)}/${b.id}`, { customFieldOption: { default: true } });
    const afterMove = defaults((await admin.get(optionsPath(f.id))).body.customFieldOptions);
    const cleared = await admin.put(`${optionsPath(f.id)}/${b.id}`, { customFieldOption: { default: false } });
    const afterClear = defaults((await admin.get(optionsPath(f.id))).body.customFieldOptions);

    expect(moved.status).toBe(200);
    expect(moved.body.customFieldOption).toEqual({ ...b, default: true });
    expect(afterMove).toEqual(['b']);
    expect(cleared.body.customFieldOption.default).toBe(false);
    expect(afterClear).toEqual([]);
    expect((await admin.get(`${optionsPath(f.id)}/${a.id}`)).body.customFieldOption.default).toBe(false);
  });

  it('refuses two defaults inline at field create with 422', async () => {
    const res = await admin.post(FIELDS, {
      ticketField: {
        title: 'Two defaults',
        type: 'dropdown',
        options: [
          { name: 'A', value: 'a', default: true },
          { name: 'B', value: 'b', default: true },
        ],
      },
    });

    expect(res.status).toBe(422);
  });
});

describe('OPTION_IN_USE', () => {
  it('refuses deleting a dropdown option a ticket uses, and allows it once the ticket is updated away from it', async () => {
    const f = await newField(admin, {
      type: 'dropdown',
      options: [
        { name: 'Gold', value: 'gold' },
        { name: 'Silver', value: 'silver' },
      ],
    });
    const [gold] = f.options;
    const t = await newTicket(admin, { customFields: [{ id: f.id, value: 'gold' }] });

    const inUse = await admin.del(`${optionsPath(f.id)}/${gold.id}`);
    await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: 'silver' }] } });
    const freed = await admin.del(`${optionsPath(f.id)}/${gold.id}`);

    expect(inUse.status).toBe(422);
    expect(inUse.body).toMatchObject({ success: false, error: { code: 'OPTION_IN_USE' } });
    expect(freed.status).toBe(204);
  });

  it('refuses deleting a multiselect option a ticket uses, and allows it once the value is cleared with null', async () => {
    const f = await newField(admin, {
      type: 'multiselect',
      options: [
        { name: 'Red', value: 'red' },
        { name: 'Blue', value: 'blue' },
      ],
    });
    const [red, blue] = f.options;
    const t = await newTicket(admin, { customFields: [{ id: f.id, value: ['red', 'blue'] }] });

    const inUse = [await admin.del(`${optionsPath(f.id)}/${red.id}`), await admin.del(`${optionsPath(f.id)}/${blue.id}`)];
    await admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: null }] } });
    const freed = [await admin.del(`${optionsPath(f.id)}/${red.id}`), await admin.del(`${optionsPath(f.id)}/${blue.id}`)];

    expect(inUse.map((r) => r.body.error?.code)).toEqual(['OPTION_IN_USE', 'OPTION_IN_USE']);
    expect(freed.map((r) => r.status)).toEqual([204, 204]);
  });

  it('counts every ticket: the option stays in use until the last ticket using it is deleted', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    const gold = f.options[0];
    const t1 = await newTicket(admin, { customFields: [{ id: f.id, value: 'gold' }] });
    const t2 = await newTicket(admin, { customFields: [{ id: f.id, value: 'gold' }] });

    await admin.del(`${TICKETS}/${t1.id}`);
    const stillInUse = await admin.del(`${optionsPath(f.id)}/${gold.id}`);
    await admin.del(`${TICKETS}/${t2.id}`);
    const freed = await admin.del(`${optionsPath(f.id)}/${gold.id}`);

    expect(stillInUse.status).toBe(422);
    expect(stillInUse.body.error.code).toBe('OPTION_IN_USE');
    expect(freed.status).toBe(204);
  });

  it('refuses changing the value of an option in use (tickets store values) with 422 OPTION_IN_USE, but allows renaming', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    await newTicket(admin, { customFields: [{ id: f.id, value: 'gold' }] });

    const revalue = await admin.put(`${optionsPath(f.id)}/${f.options[0].id}`, opt('Gold', 'golden'));
    const rename = await admin.put(`${optionsPath(f.id)}/${f.options[0].id}`, { customFieldOption: { name: 'Golden' } });

    expect(revalue.status).toBe(422);
    expect(revalue.body.error.code).toBe('OPTION_IN_USE');
    expect(rename.status).toBe(200);
    expect(rename.body.customFieldOption).toMatchObject({ name: 'Golden', value: 'gold' });
  });

  it('a deleted option is no longer a valid ticket value', async () => {
    const f = await newField(admin, { type: 'dropdown', options: [{ name: 'Gold', value: 'gold' }] });
    await admin.del(`${optionsPath(f.id)}/${f.options[0].id}`);

    const res = await admin.post(TICKETS, { ticket: { subject: 'x', customFields: [{ id: f.id, value: 'gold' }] } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
  });
});

describe('option concurrency and the 2000 cap', () => {
  it('30 parallel creates of the same value: exactly one 201, 29 409 DUPLICATE_OPTION_VALUE', async () => {
    const f = await newField(admin, { type: 'dropdown' });

    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => admin.post(optionsPath(f.id), opt(`Same ${i}`, 'same'))));

    expect(statusCounts(results)).toEqual({ 201: 1, 409: 29 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('DUPLICATE_OPTION_VALUE');
    const listed = (await admin.get(optionsPath(f.id))).body.customFieldOptions;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toEqual(results.find((r) => r.status === 201)!.body.customFieldOption);
  });

  it('refuses more than 2000 inline options with 422 TOO_MANY_OPTIONS', async () => {
    const options = Array.from({ length: 2001 }, (_, i) => ({ name: `O${i}`, value: `o${i}` }));

    const res = await admin.post(FIELDS, { ticketField: { title: 'Too many', type: 'dropdown', options } });

    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('TOO_MANY_OPTIONS');
  });

  it('with 1990 options, 30 parallel distinct creates: exactly 10 succeed, 20 get 422 TOO_MANY_OPTIONS, 2000 listed', { timeout: 150_000 }, async () => {
    const options = Array.from({ length: 1990 }, (_, i) => ({ name: `Option ${i}`, value: `v${i}` }));
    // Arrange: the 1990-option field through the ticket-fields service, not the API: 1990 inline options are 44
    // transactions, which on a loaded machine can outlast a request's deadline (a clean, retryable 503), and this test is
    // about the options endpoint at the cap, not about that create (the API's inline-option limits are tested above).
    const input = CreateTicketFieldBodySchema.parse({ ticketField: { title: 'Big list', type: 'dropdown', options } }).ticketField;
    const fieldId = (await fields.createField(owner, input)).id;
    expect((await admin.get(optionsPath(fieldId))).body.customFieldOptions).toHaveLength(1990);

    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => admin.post(optionsPath(fieldId), opt(`Extra ${i}`, `extra${i}`))));

    expect(statusCounts(results)).toEqual({ 201: 10, 422: 20 });
    for (const r of results.filter((x) => x.status === 422)) expect(r.body.error.code).toBe('TOO_MANY_OPTIONS');
    const listed = (await admin.get(optionsPath(fieldId))).body.customFieldOptions;
    expect(listed).toHaveLength(2000);
    expect(new Set(listed.map((o: Json) => o.value)).size).toBe(2000);
    const extras = listed
      .filter((o: Json) => o.value.startsWith('extra'))
      .map((o: Json) => o.value)
      .sort();
    expect(extras).toEqual(
      results
        .filter((r) => r.status === 201)
        .map((r) => r.body.customFieldOption.value)
        .sort(),
    );
  });
});
