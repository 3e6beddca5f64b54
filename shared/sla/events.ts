import * as z from '../zod.ts';
import { domainEventDetail } from '../events/detail.ts';
import { SLA_METRICS, TIME_MODES } from './limits.ts';

/** EventBridge source of SLA events. */
export const SLA_EVENT_SOURCE = 'support-desk.sla';
export const SLA_BREACHED = 'sla.breached';

/**
 * `sla.breached`: a metric of a ticket passed its deadline. Recorded once per
 * metric episode (a ticket's first reply; each nextReply; each resolution
 * run, which a reopen starts again), through the outbox in the same
 * transaction that marks the breach.
 */
export const SlaBreachedDataSchema = z.object({
  ticket: z.object({ id: z.string() }),
  metric: z.enum(SLA_METRICS),
  policy: z.object({ id: z.string(), name: z.string() }),
  timeMode: z.enum(TIME_MODES),
  targetMinutes: z.number().check(z.int()),
  startedAt: z.iso.datetime(),
  dueAt: z.iso.datetime(),
  achievedAt: z.describe(z.nullable(z.iso.datetime()), 'Set when the metric was achieved late before the check saw it'),
});
export type SlaBreachedData = z.infer<typeof SlaBreachedDataSchema>;

/** EventBridge `detail` of sla.breached (same envelope as every domain event). */
export const SlaBreachedDetailSchema = z.meta(domainEventDetail(SLA_BREACHED, SlaBreachedDataSchema), { id: 'SlaBreachedEventDetail' });
