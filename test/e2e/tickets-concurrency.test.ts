import { beforeEach, describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';
import { as, newField, newTicket, optionsPath, statusCounts, TICKETS, type Desk, type Json } from '../support/desk.ts';

const { client } = useGateway();

let admin: Desk;

// An account for each test: every ticket write reads all of its account's custom fields, and one test's fields (the
// first makes 20) are no part of the next one's race.
beforeEach(async () => {
  admin = as(client, (await createTestAccount()).ownerKey);
});

describe('concurrent ticket updates', { timeout: 60_000 }, () => {
  it('20 parallel PUTs each setting a different custom field all succeed and none is lost', async () => {
    const fields: Json[] = await Promise.all(Array.from({ length: 20 }, (_, i) => newField(admin, { type: 'text', title: `Parallel ${i}`, fieldKey: `parallel_${i}` })));
    const t = await newTicket(admin);

    const results = await Promise.all(fields.map((f, i) => admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: `value ${i}` }] } })));

    expect(statusCounts(results)).toEqual({ 200: 20 });
    const final = (await admin.get(`${TICKETS}/${t.id}`)).body.ticket;
    expect(final.customFields).toHaveLength(20);
    expect(final.customFields).toEqual(expect.arrayContaining(fields.map((f, i) => ({ id: f.id, value: `value ${i}` }))));
  });

  it('20 parallel PUTs on different tickets using the same dropdown options keep usage counts exact', async () => {
    const values = ['a', 'b', 'c', 'd'];
    const f = await newField(admin, { type: 'dropdown', options: values.map((v) => ({ name: v.toUpperCase(), value: v })) });
    const tickets: Json[] = await Promise.all(Array.from({ length: 20 }, (_, i) => newTicket(admin, { subject: `usage ${i}` })));

    const results = await Promise.all(tickets.map((t, i) => admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: values[i % 4] }] } })));

    expect(statusCounts(results)).toEqual({ 200: 20 });
    // Every option is used by 5 tickets: none can be deleted while any of them exists.
    const whileUsed = await Promise.all(f.options.map((o: Json) => admin.del(`${optionsPath(f.id)}/${o.id}`)));
    expect(whileUsed.map((r) => r.body.error?.code)).toEqual(['OPTION_IN_USE', 'OPTION_IN_USE', 'OPTION_IN_USE', 'OPTION_IN_USE']);
    // Delete all but the last ticket using option "d": "d" must still count exactly one use.
    const lastD = tickets[19];
    const deletes = await Promise.all(tickets.slice(0, 19).map((t) => admin.del(`${TICKETS}/${t.id}`)));
    expect(statusCounts(deletes)).toEqual({ 204: 19 });
    const afterDeletes = await Promise.all(f.options.map((o: Json) => admin.del(`${optionsPath(f.id)}/${o.id}`)));
    expect(afterDeletes.map((r) => r.status)).toEqual([204, 204, 204, 422]);
    expect((await admin.del(`${TICKETS}/${lastD.id}`)).status).toBe(204);
    expect((await admin.del(`${optionsPath(f.id)}/${f.options[3].id}`)).status).toBe(204);
  });

  it('20 parallel PUTs switching one ticket between dropdown options leave exactly the final option in use', async () => {
    const values = ['a', 'b', 'c', 'd', 'e'];
    const f = await newField(admin, { type: 'dropdown', options: values.map((v) => ({ name: v.toUpperCase(), value: v })) });
    const t = await newTicket(admin, { customFields: [{ id: f.id, value: 'a' }] });

    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: values[i % 5] }] } })));

    expect(statusCounts(results)).toEqual({ 200: 20 });
    const finalValue = (await admin.get(`${TICKETS}/${t.id}`)).body.ticket.customFields[0].value;
    const deletes = await Promise.all(f.options.map((o: Json) => admin.del(`${optionsPath(f.id)}/${o.id}`)));
    expect(deletes.map((r) => r.status)).toEqual(values.map((v) => (v === finalValue ? 422 : 204)));
    expect((await admin.del(`${TICKETS}/${t.id}`)).status).toBe(204);
    const last = f.options.find((o: Json) => o.value === finalValue);
    expect((await admin.del(`${optionsPath(f.id)}/${last.id}`)).status).toBe(204);
  });

  it('parallel multiselect PUTs on different tickets keep usage exact: all options free after the tickets go', async () => {
    const f = await newField(admin, { type: 'multiselect', options: ['x', 'y', 'z'].map((v) => ({ name: v, value: v })) });
    const tickets: Json[] = await Promise.all(Array.from({ length: 10 }, (_, i) => newTicket(admin, { subject: `multi ${i}`, customFields: [{ id: f.id, value: ['x'] }] })));

    const results = await Promise.all(tickets.map((t, i) => admin.put(`${TICKETS}/${t.id}`, { ticket: { customFields: [{ id: f.id, value: i % 2 ? ['y', 'z'] : ['x', 'z'] }] } })));
    expect(statusCounts(results)).toEqual({ 200: 10 });
    await Promise.all(tickets.map((t) => admin.del(`${TICKETS}/${t.id}`)));

    const deletes = await Promise.all(f.options.map((o: Json) => admin.del(`${optionsPath(f.id)}/${o.id}`)));

    expect(deletes.map((r) => r.status)).toEqual([204, 204, 204]);
  });
});
