import { historyRoutes } from '#shared/history/contract.ts';
import * as audits from '#shared/audits/service.ts';
import * as exports from '#shared/exports/service.ts';
import { EXPORT_FEEDS } from '#shared/history/feeds.ts';
import { nextLink } from '#shared/http/links.ts';
import { httpGroup } from '#shared/http/middleware.ts';
import { ticketExists } from '#shared/tickets/service.ts';

export const handler = httpGroup(historyRoutes, {
  listTicketAudits: async ({ principal, params, query, event }) => {
    const page = await audits.listTicketAudits(principal, params.id, query, (id) => ticketExists(principal.accountId, id));
    return { audits: page.audits, meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
  listAudits: async ({ principal, query, event }) => {
    const page = await audits.listAccountAudits(principal, query);
    return { audits: page.audits, meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
  exportTickets: ({ principal, query }) => exports.exportPage(principal, 'ticket', EXPORT_FEEDS.ticket, query),
  exportContacts: ({ principal, query }) => exports.exportPage(principal, 'contact', EXPORT_FEEDS.contact, query),
  exportOrganizations: ({ principal, query }) => exports.exportPage(principal, 'organization', EXPORT_FEEDS.organization, query),
  exportUsers: ({ principal, query }) => exports.exportPage(principal, 'user', EXPORT_FEEDS.user, query),
});
