import { httpGroup } from '#shared/http/middleware.ts';
import { slaPolicyRoutes } from '#shared/sla/contract.ts';
import * as sla from '#shared/sla/service.ts';
import { slaPoliciesSettings } from './settings.ts';

/** Recompute hands its batches to this queue. */
const recomputeQueueUrl = slaPoliciesSettings().SLA_RECOMPUTE_QUEUE_URL;

const data = <T>(d: T) => ({ success: true, data: d });

export const handler = httpGroup(slaPolicyRoutes, {
  listSlaPolicies: async ({ principal }) => data((await sla.listPolicies(principal)).map(sla.toPolicyDto)),
  createSlaPolicy: async ({ principal, body }) => {
    const created = (policy: sla.PolicyRecord) => data(sla.toPolicyDto(policy));
    return created(await sla.createPolicy(principal, body, { answer: created }));
  },
  updateSlaPolicy: async ({ principal, params, body }) => data(sla.toPolicyDto(await sla.updatePolicy(principal, params.policyId, body))),
  deleteSlaPolicy: async ({ principal, params }) => sla.deletePolicy(principal, params.policyId),
  reorderSlaPolicies: async ({ principal, body }) => data((await sla.reorderPolicies(principal, body.orderedIds)).map(sla.toPolicyDto)),
  testSlaPolicies: async ({ principal, body }) => data(await sla.testPolicies(principal, body.ticket)),
  getTicketSlaState: async ({ principal, params }) => data(await sla.getTicketState(principal, params.ticketId)),
  recomputeSla: async ({ principal }) => data(await sla.requestRecompute(principal, recomputeQueueUrl)),
  getSlaSchedule: async ({ principal }) => data(await sla.getSchedule(principal)),
  setSlaSchedule: async ({ principal, body }) => data(await sla.setSchedule(principal, body.schedule)),
});
