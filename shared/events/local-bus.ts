import { GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { env } from '../config/env.ts';
import type { BusEntry, EventBusPort, PutEventsResult } from './bus.ts';
import { sqs } from './sqs.ts';
import { routeEvent, type QueueName } from './topology.ts';

/** Account id of every local resource (fauxqs uses the same). */
export const LOCAL_ACCOUNT = '000000000000';

/** The EventBridge event as EventBridge delivers it to an SQS target: the message body consumers parse. */
export function busEnvelope(entry: BusEntry, region: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': entry.detailType,
    source: entry.source,
    account: LOCAL_ACCOUNT,
    // EventBridge stamps whole seconds.
    time: (entry.time ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [],
    detail: JSON.parse(entry.detail),
  };
}

/**
 * The local stack's event bus. No EventBridge emulator exists, so this routes
 * each entry by the same rule table the CDK app deploys (shared/events/topology.ts)
 * to the fauxqs queues, wrapped exactly as EventBridge wraps it. An entry
 * whose queues cannot all be reached is reported failed, like a PutEvents
 * partial failure, so the publisher's retry path runs locally too.
 */
export function localBus(): EventBusPort {
  const urls = new Map<QueueName, Promise<string>>();
  const queueUrl = (name: QueueName) => {
    let url = urls.get(name);
    if (!url) {
      url = sqs.send(new GetQueueUrlCommand({ QueueName: name })).then((o) => o.QueueUrl!);
      url.catch(() => urls.delete(name));
      urls.set(name, url);
    }
    return url;
  };
  const region = env().AWS_REGION;
  return {
    async putEvents(entries) {
      const result: PutEventsResult = { failedEntryCount: 0, entries: [] };
      for (const entry of entries) {
        const envelope = busEnvelope(entry, region);
        try {
          for (const queue of routeEvent(entry)) {
            await sqs.send(new SendMessageCommand({ QueueUrl: await queueUrl(queue), MessageBody: JSON.stringify(envelope) }));
          }
          result.entries.push({ eventId: envelope.id });
        } catch (err) {
          result.failedEntryCount += 1;
          result.entries.push({ errorCode: 'InternalFailure', errorMessage: (err as Error).message });
        }
      }
      return result;
    },
  };
}
