import { httpGroup } from '#shared/http/middleware.ts';
import { nextLink } from '#shared/http/links.ts';
import { macroRoutes } from '#shared/macros/contract.ts';
import type { Macro } from '#shared/macros/model.ts';
import * as macros from '#shared/macros/service.ts';
import { toMessageDto } from '#shared/messages/service.ts';
import { toTicketDto } from '#shared/tickets/service.ts';
import { viewRoutes } from '#shared/views/contract.ts';
import type { View } from '#shared/views/model.ts';
import * as views from '#shared/views/service.ts';
import { viewsSettings } from './settings.ts';

/** A new or edited view's count runs from this queue. */
const queueUrl = viewsSettings().VIEW_RECOUNT_QUEUE_URL;

/** Views (decisions §21) and macros (§22): the agent's working tools, one function beside the tickets one. */
export const handler = httpGroup([...viewRoutes, ...macroRoutes], {
  listViews: async ({ principal }) => ({ views: await views.listViews(principal) }),
  createView: async ({ principal, body }) => {
    const created = (view: View) => ({ view });
    return created(await views.createView(principal, body.view, queueUrl, { answer: created }));
  },
  viewCounts: async ({ principal, query }) => ({ counts: await views.viewCounts(principal, query.ids) }),
  getView: async ({ principal, params }) => ({ view: await views.getView(principal, params.id) }),
  updateView: async ({ principal, params, body }) => ({ view: await views.updateView(principal, params.id, body.view, queueUrl) }),
  deleteView: async ({ principal, params }) => views.deleteView(principal, params.id),
  viewCount: async ({ principal, params }) => ({ count: await views.viewCount(principal, params.id) }),
  viewTickets: async ({ principal, params, query, event }) => {
    const page = await views.viewTickets(principal, params.id, query);
    return { tickets: page.tickets.map(toTicketDto), meta: { pageSize: query.page_size, hasMore: page.next !== null }, links: { next: nextLink(event, page.next) } };
  },
  listMacros: async ({ principal }) => ({ macros: await macros.listMacros(principal) }),
  createMacro: async ({ principal, body }) => {
    const created = (macro: Macro) => ({ macro });
    return created(await macros.createMacro(principal, body.macro, { answer: created }));
  },
  getMacro: async ({ principal, params }) => ({ macro: await macros.getMacro(principal, params.id) }),
  updateMacro: async ({ principal, params, body }) => ({ macro: await macros.updateMacro(principal, params.id, body.macro) }),
  deleteMacro: async ({ principal, params }) => macros.deleteMacro(principal, params.id),
  previewMacro: async ({ principal, params }) => ({ result: await macros.previewMacro(principal, params.id, params.macroId) }),
  applyMacro: async ({ principal, params }) => {
    const done = await macros.applyMacro(principal, params.id, params.macroId);
    return { ticket: toTicketDto(done.ticket), message: done.message && (await toMessageDto(done.message)) };
  },
});
