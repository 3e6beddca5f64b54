import { automationRoutes } from '#shared/automations/contract.ts';
import type { Automation } from '#shared/automations/model.ts';
import * as automations from '#shared/automations/service.ts';
import { httpGroup } from '#shared/http/middleware.ts';

export const handler = httpGroup(automationRoutes, {
  listAutomations: async ({ principal }) => ({ success: true, data: await automations.listAutomations(principal) }),
  createAutomation: async ({ principal, body }) => {
    const created = (data: Automation) => ({ success: true, data });
    return created(await automations.createAutomation(principal, body, { answer: created }));
  },
  reorderAutomations: async ({ principal, body }) => ({ success: true, data: await automations.reorderAutomations(principal, body.orderedIds) }),
  testAutomations: async ({ principal, body }) => ({ success: true, data: await automations.dryRun(principal, body) }),
  updateAutomation: async ({ principal, params, body }) => ({ success: true, data: await automations.updateAutomation(principal, params.automationId, body) }),
  deleteAutomation: async ({ principal, params }) => automations.deleteAutomation(principal, params.automationId),
});
