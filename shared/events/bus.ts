import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { injectFaults } from '../faults/inject.ts';
import { withoutSdkLogger } from '../sdk-client.ts';
import { busSettings } from './settings.ts';

/** One PutEvents entry. */
export interface BusEntry {
  source: string;
  detailType: string;
  /** JSON of the event detail. */
  detail: string;
  time?: Date;
}

/** Per-entry outcome, in entry order (as PutEvents answers). */
export interface PutEventsResult {
  failedEntryCount: number;
  entries: { eventId?: string; errorCode?: string; errorMessage?: string }[];
}

/**
 * The event-bus port: EventBridge, in AWS and locally (local/bus.ts serves
 * PutEvents on the stack's EventBridge endpoint, routing by the template's
 * rules to the fauxqs queues). Both take
 * at most 10 entries per call and may reject some entries of a call.
 */
export interface EventBusPort {
  putEvents(entries: BusEntry[]): Promise<PutEventsResult>;
}

/**
 * Per-attempt limits: PutEvents answers in milliseconds, so an attempt that
 * hangs is cut and retried by the SDK, and what the retries do not absorb
 * stays in the outbox for the sweeper, rather than holding the publisher
 * (and the stream shard behind it) until the function times out.
 */
export const EVENTS_TIMEOUTS = { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true } as const;

/** An EventBridge client with the limits above (and, locally, the injected faults of decisions §19). */
export function eventBridgeClient(): EventBridgeClient {
  const client = withoutSdkLogger(new EventBridgeClient({ region: busSettings().AWS_REGION, requestHandler: { ...EVENTS_TIMEOUTS } }));
  injectFaults(client, 'events', { requestTimeoutMs: EVENTS_TIMEOUTS.requestTimeout });
  return client;
}

export function eventBridgeBus(busName: string, client = eventBridgeClient()): EventBusPort {
  return {
    async putEvents(entries) {
      const out = await client.send(new PutEventsCommand({ Entries: entries.map((e) => ({ EventBusName: busName, Source: e.source, DetailType: e.detailType, Detail: e.detail, Time: e.time })) }));
      return {
        failedEntryCount: out.FailedEntryCount ?? 0,
        entries: (out.Entries ?? []).map((r) => ({ eventId: r.EventId, errorCode: r.ErrorCode, errorMessage: r.ErrorMessage })),
      };
    },
  };
}

/** The configured bus (EVENT_BUS_NAME): EventBridge, locally the stack's EventBridge endpoint (AWS_ENDPOINT_URL_EVENTBRIDGE). */
export async function configuredBus(): Promise<EventBusPort> {
  return eventBridgeBus(busSettings().EVENT_BUS_NAME);
}
