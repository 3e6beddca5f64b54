import { checkBreaches } from '#shared/sla/service.ts';

/**
 * Every minute: mark overdue SLA metrics breached and record sla.breached.
 * The schedule event's `time` is the check's "now" (the minute it stands for).
 */
export async function handler(event?: { time?: string }) {
  const at = event?.time ? Date.parse(event.time) : Number.NaN;
  return checkBreaches(Number.isNaN(at) ? Date.now() : at);
}
