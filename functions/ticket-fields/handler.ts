import { httpGroup } from '#shared/http/middleware.ts';
import { nextLink } from '#shared/http/links.ts';
import { ticketFieldRoutes } from '#shared/ticket-fields/contract.ts';
import type { OptionDto, TicketFieldDto } from '#shared/ticket-fields/model.ts';
import * as fields from '#shared/ticket-fields/service.ts';

export const handler = httpGroup(ticketFieldRoutes, {
  listTicketFields: async ({ principal, query, event }) => {
    const page = await fields.listFields(principal, query);
    return { ticketFields: page.fields, meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
  getTicketField: async ({ principal, params }) => ({ ticketField: await fields.getField(principal, params.id) }),
  createTicketField: async ({ principal, body }) => {
    const created = (ticketField: TicketFieldDto) => ({ ticketField });
    return created(await fields.createField(principal, body.ticketField, { answer: created }));
  },
  updateTicketField: async ({ principal, params, body }) => ({ ticketField: await fields.updateField(principal, params.id, body.ticketField) }),
  deleteTicketField: async ({ principal, params }) => fields.deleteField(principal, params.id),
  listFieldOptions: async ({ principal, params }) => ({ customFieldOptions: await fields.listOptions(principal, params.id) }),
  getFieldOption: async ({ principal, params }) => ({ customFieldOption: await fields.getOption(principal, params.id, params.optionId) }),
  createFieldOption: async ({ principal, params, body }) => {
    const created = (customFieldOption: OptionDto) => ({ customFieldOption });
    return created(await fields.createOption(principal, params.id, body.customFieldOption, { answer: created }));
  },
  updateFieldOption: async ({ principal, params, body }) => ({ customFieldOption: await fields.updateOption(principal, params.id, params.optionId, body.customFieldOption) }),
  deleteFieldOption: async ({ principal, params }) => fields.deleteOption(principal, params.id, params.optionId),
});
