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
 * The event-bus port: EventBridge in AWS; locally a bus that routes entries by
 * the topology rules to fauxqs queues (local/bus.ts). Both take
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

let localBusFactory: (() => Promise<EventBusPort>) | undefined;

/**
 * The local stack installs its bus here (local/stack.ts, local/pipeline.ts)
 * before any publisher loads, so shared/ never imports the local-only code.
 */
export function installLocalBus(factory: () => Promise<EventBusPort>): void {
  localBusFactory = factory;
}

/** The bus chosen by configuration: EVENT_BUS_NAME=local is the local stack's bus, anything else an EventBridge bus name. */
export async function configuredBus(): Promise<EventBusPort> {
  const name = busSettings().EVENT_BUS_NAME;
  if (name === 'local') {
    if (!localBusFactory) throw new Error('EVENT_BUS_NAME=local: the local bus is not installed (local/stack.ts configureLocalEnv or startPipeline does it)');
    return localBusFactory();
  }
  return eventBridgeBus(name);
}
