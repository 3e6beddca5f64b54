import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
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

export function eventBridgeBus(busName: string, client = new EventBridgeClient({ region: busSettings().AWS_REGION })): EventBusPort {
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
