import { describe, expect, it } from 'vitest';
import { createTestAccount, useGateway } from '../support/api.ts';

const { client } = useGateway();

describe('tickets smoke', () => {
  it('creates, updates, lists and deletes a ticket with a dropdown custom field', async () => {
    const acct = await createTestAccount();
    const token = acct.ownerKey;
    const field = await client.request('POST', '/helpdesk/api/v1/ticket_fields', {
      token,
      body: {
        ticketField: {
          title: 'Plan',
          type: 'dropdown',
          options: [
            { name: 'Gold', value: 'gold' },
            { name: 'Silver', value: 'silver', default: true },
          ],
        },
      },
    });
    expect(field.status).toBe(201);
    const fieldId = field.body.ticketField.id;
    const created = await client.request('POST', '/helpdesk/api/v1/tickets', { token, body: { ticket: { subject: 'Help', customFields: [{ id: fieldId, value: 'gold' }] } } });
    expect(created.status).toBe(201);
    expect(created.body.ticket).toMatchObject({ subject: 'Help', status: 'new', priority: 'normal', type: 'question' });
    const id = created.body.ticket.id;
    const gold = field.body.ticketField.options.find((o: { value: string }) => o.value === 'gold').id;
    const inUse = await client.request('DELETE', `/helpdesk/api/v1/ticket_fields/${fieldId}/options/${gold}`, { token });
    expect(inUse.status).toBe(422);
    expect(inUse.body.error.code).toBe('OPTION_IN_USE');
    const updated = await client.request('PUT', `/helpdesk/api/v1/tickets/${id}`, { token, body: { ticket: { status: 'resolved', customFields: [{ id: fieldId, value: 'silver' }] } } });
    expect(updated.status).toBe(200);
    expect(updated.body.ticket.status).toBe('resolved');
    const freed = await client.request('DELETE', `/helpdesk/api/v1/ticket_fields/${fieldId}/options/${gold}`, { token });
    expect(freed.status).toBe(204);
    const list = await client.request('GET', '/helpdesk/api/v1/tickets?page_size=1&sort_by=status', { token });
    expect(list.status).toBe(200);
    expect(list.body.tickets).toHaveLength(1);
    const fields = await client.request('GET', '/helpdesk/api/v1/ticket_fields?page_size=5', { token });
    expect(fields.body.ticketFields.map((f: { id: string }) => f.id)).toEqual(['system_subject', 'system_status', 'system_priority', 'system_type', 'system_assignee']);
    const page2 = await client.request('GET', fields.body.links.next, { token });
    expect(page2.body.ticketFields.map((f: { id: string }) => f.id)).toEqual(['system_requester', 'system_tags', fieldId]);
    expect(page2.body.links.next).toBeNull();
    const del = await client.request('DELETE', `/helpdesk/api/v1/tickets/${id}`, { token });
    expect(del.status).toBe(204);
    const gone = await client.request('GET', `/helpdesk/api/v1/tickets/${id}`, { token });
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});
