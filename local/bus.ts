import { GetQueueUrlCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { randomUUID } from 'node:crypto';
import { env } from '#shared/config/env.ts';
import type { BusEntry, EventBusPort, PutEventsResult } from '#shared/events/bus.ts';
import { entrySize, MAX_ENTRY_BYTES } from '#shared/events/entry-size.ts';
import { sqs, SqsMessageRefusedError } from '#shared/events/sqs.ts';
import { routeEvent, type QueueName } from '#shared/events/topology.ts';

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

/** What PutEvents throws for a request it refuses as a whole. */
export class BusValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationException';
  }
}

/**
 * The local stack's event bus. No EventBridge emulator exists, so this routes
 * each entry by the same rule table the CDK app deploys (shared/events/topology.ts)
 * to the fauxqs queues, wrapped exactly as EventBridge wraps it. It is as
 * strict as EventBridge: at most 10 entries and 256 KB per request (counted as
 * EventBridge counts entries), a detail that must be a JSON object. An entry
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
      if (entries.length > 10) throw new BusValidationError("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10");
      const total = entries.reduce((n, e) => n + entrySize(e), 0);
      if (total > MAX_ENTRY_BYTES) throw new BusValidationError(`Total size of the entries in the request is over the limit (${total} bytes > ${MAX_ENTRY_BYTES})`);
      const result: PutEventsResult = { failedEntryCount: 0, entries: [] };
      // Entries are independent: they go out in parallel, as EventBridge fans them out.
      result.entries = await Promise.all(
        entries.map(async (entry) => {
          let envelope: ReturnType<typeof busEnvelope>;
          try {
            envelope = busEnvelope(entry, region);
            if (!envelope.detail || typeof envelope.detail !== 'object' || Array.isArray(envelope.detail)) throw new Error('Detail is not a JSON object');
          } catch (err) {
            return { errorCode: 'MalformedDetail', errorMessage: (err as Error).message };
          }
          try {
            const body = JSON.stringify(envelope);
            await Promise.all(routeEvent(entry).map(async (queue) => sqs.send(new SendMessageCommand({ QueueUrl: await queueUrl(queue), MessageBody: body }))));
            return { eventId: envelope.id };
          } catch (err) {
            // A message the queue refuses for its content will never go through: in AWS it lands in the rule
            // target's DLQ; here it is refused permanently, so the publisher parks it instead of retrying.
            if (err instanceof SqsMessageRefusedError) return { errorCode: 'InvalidArgument', errorMessage: err.message };
            // EventBridge accepted the entry; a target it cannot reach is retried by EventBridge, not the caller.
            // Locally the caller's retry stands in for that, so the entry is reported as an internal failure.
            return { errorCode: 'InternalFailure', errorMessage: (err as Error).message };
          }
        }),
      );
      result.failedEntryCount = result.entries.filter((e) => e.errorCode).length;
      return result;
    },
  };
}
