import { sweepRetention } from '#shared/privacy/retention.ts';

/** Batches are started until this long before the function's timeout (600 s), so the last one finishes inside it. */
const MARGIN_MS = 60_000;
const TIMEOUT_MS = 600_000;

/**
 * Daily (decisions §23): delete the tickets closed longer ago than each
 * account's retention. The schedule event's `time` is the sweep's "now"
 * (tests move it forward); what a run leaves, the next one does.
 */
export async function handler(event?: { time?: string }) {
  const at = event?.time ? Date.parse(event.time) : Number.NaN;
  return sweepRetention(Number.isNaN(at) ? Date.now() : at, { deadline: Date.now() + TIMEOUT_MS - MARGIN_MS });
}
