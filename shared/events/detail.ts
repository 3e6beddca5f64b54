import * as z from '../zod.ts';

/**
 * The EventBridge `detail` envelope every domain event shares (ticket events
 * add `actor`): the event's own id, the account, what caused it, its name,
 * the time of the change and its `data`. One schema per event type is built
 * from it; app/event-catalog.ts publishes them.
 */
export const detailEnvelope = {
  eventId: z.describe(z.string(), 'evt_…: stable across retries, republishes and replays; deduplicate on it'),
  accountId: z.string(),
  correlationId: z.describe(z.optional(z.string()), 'The x-request-id of the request (or the id of the event) that caused this event'),
  /** decisions §7: present (true) when long string values in `data` were shortened to keep the event under 256 KB. */
  truncated: z.describe(z.optional(z.literal(true)), 'Long string values in data were shortened (none below 64 characters); fetch the resource for the full values'),
};

/**
 * Any event recorded through the outbox: ticket events, and the other domains'
 * own (organization.created, message.created). Declared here, beside the
 * envelope, so the outbox and entry-size (which bounds a detail) both import it
 * without importing each other.
 */
export interface EventDetail {
  eventId: string;
  accountId: string;
  event: string;
  timestamp: string;
  data: Record<string, unknown>;
  /** The request (x-request-id) or event that caused this one, so it can be followed to the receiver. */
  correlationId?: string;
  /** Set when string values in `data` were shortened to keep the event publishable (decisions §7). */
  truncated?: true;
}

/** The detail schema of one domain event type: the envelope with its name and `data`. */
export const domainEventDetail = <E extends string, D extends z.ZodMiniType>(event: E, data: D, timestamp: z.ZodMiniType = z.iso.datetime()) =>
  z.object({ ...detailEnvelope, event: z.literal(event), timestamp, data });
