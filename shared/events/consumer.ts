import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from '../zod.ts';
import { logger } from '../logger.ts';
import { correlationIdFrom, recordMetric, withCorrelation } from '../observability.ts';
import type { EventDetail } from './detail.ts';
import { METRICS } from '../metrics.ts';
import { consumerSettings } from './settings.ts';
import { changeMessageVisibility, queueUrlFromArn } from './sqs.ts';

/** What every consumer reads of a detail, whatever its event: its id and account, and what caused it. A queue's schema extends it. */
export const ConsumedDetailSchema = z.object({ eventId: z.string(), accountId: z.string(), correlationId: z.optional(z.string()) });
export type ConsumedDetail = z.infer<typeof ConsumedDetailSchema>;

/** The EventBridge event as an SQS target receives it (the message body); EventBridge's other fields are kept as they came. */
export interface BusEnvelope<D = EventDetail> {
  id: string;
  source: string;
  'detail-type': string;
  time: string;
  detail: D;
  [field: string]: unknown;
}

/** The envelope around a detail of this schema, as a consumer parses a message body. */
const busEnvelopeSchema = <S extends z.ZodMiniType>(detail: S) => z.looseObject({ id: z.string(), source: z.string(), 'detail-type': z.string(), time: z.string(), detail });

/** A message whose envelope or detail is not what the queue's schema says: it fails like a handler that throws (retried with backoff, then dead-lettered). */
export class MalformedMessageError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MalformedMessageError';
  }
}

/**
 * Hand a failed message back after a short, growing delay instead of the
 * queue's visibility timeout (minutes): a transient failure is retried soon,
 * and a message that fails every time reaches the DLQ (maxReceiveCount) in
 * seconds rather than after maxReceiveCount visibility timeouts, while the
 * rest of the queue keeps flowing. Best effort: without it the queue's own
 * timeout applies.
 */
export async function backOff(name: string, record: SQSRecord): Promise<void> {
  const receives = Number(record.attributes?.ApproximateReceiveCount ?? '1');
  const delay = Math.round(Math.min(300, consumerSettings().CONSUMER_RETRY_BASE_SECONDS * 2 ** (receives - 1)));
  try {
    await changeMessageVisibility({ QueueUrl: queueUrlFromArn(record.eventSourceARN), ReceiptHandle: record.receiptHandle, VisibilityTimeout: delay });
  } catch (err) {
    logger.warn(`${name}: could not schedule the retry`, { messageId: record.messageId, err });
  }
}

/**
 * Reads shared by the records of one batch: `memo(key, load)` runs `load` once
 * per key and hands every record the same answer. Under a burst one batch
 * holds many events of one account, which then need one read of, say, its
 * webhooks instead of one each. Scoped to the invocation, so nothing read
 * outlives the batch (a webhook created a moment ago is seen by the next one).
 * A failed load is not kept: the next record tries again.
 */
export type BatchMemo = <T>(key: string, load: () => Promise<T>) => Promise<T>;

export function batchMemo(): BatchMemo {
  const seen = new Map<string, Promise<unknown>>();
  return <T>(key: string, load: () => Promise<T>): Promise<T> => {
    let p = seen.get(key) as Promise<T> | undefined;
    if (!p) {
      p = load();
      seen.set(key, p);
      p.catch(() => seen.delete(key));
    }
    return p;
  };
}

/**
 * Process an SQS batch with Powertools' batch processor: every record handled
 * concurrently (the queues' batch sizes, at most 10, bound the fan-out), a
 * record whose `handle` throws is reported as a batch item failure
 * (reportBatchItemFailures) and only it comes back. A fresh processor per
 * invocation: the local pipeline runs several batches of one queue at once in
 * one process, and a processor keeps its batch's state. A batch that fails as
 * a whole is reported, not thrown: a throw would count as a Lambda error and
 * page for what is only a scheduled retry.
 */
export async function processSqsBatch(event: SQSEvent, handle: (record: SQSRecord) => Promise<void>): Promise<SQSBatchResponse> {
  const processor = new BatchProcessor(EventType.SQS);
  return processPartialResponse(event, handle, processor, { processInParallel: true, throwOnFullBatchFailure: false });
}

/**
 * An SQS consumer of bus events: each record's EventBridge envelope is parsed
 * with `schema`, the zod schema of the details its queue receives (the events
 * its rules in app/topology.ts route to it), and handed typed to `handle`, on
 * its own, under the event's correlation id. A body that is not JSON or does
 * not parse is logged and reported like a failure of `handle`: per record, so
 * only those are retried, with backoff, then dead-lettered (parked) by the
 * queue's redrive policy. One message that fails every time never holds up
 * the others.
 */
export function eventConsumer<S extends z.ZodMiniType<ConsumedDetail>>(name: string, schema: S, handle: (detail: z.output<S>, envelope: BusEnvelope<z.output<S>>, batch: BatchMemo) => Promise<void>) {
  const envelopeSchema = busEnvelopeSchema(schema);
  async function consumeOne(record: SQSRecord, batch: BatchMemo): Promise<void> {
    let body: { detail?: { eventId?: unknown; correlationId?: unknown } } | null;
    try {
      body = JSON.parse(record.body);
    } catch (err) {
      // A body that is not JSON will never parse: retrying cannot help, so it goes to the DLQ via its receive count.
      logger.error(`${name}: unparseable message`, { messageId: record.messageId, err });
      throw err;
    }
    const raw = typeof body?.detail === 'object' && body.detail !== null ? body.detail : {};
    // The event's correlation id (from the API request that caused it) follows it into this consumer's logs, a malformed event's too.
    await withCorrelation(correlationIdFrom(typeof raw.correlationId === 'string' ? raw.correlationId : undefined), async () => {
      const parsed = envelopeSchema.safeParse(body);
      if (!parsed.success) {
        // Like a body that is not JSON: it goes to the DLQ via its receive count, where an operator can see what it held.
        const err = new MalformedMessageError(`${name}: the message is not an event this queue takes: ${z.prettifyError(parsed.error)}`, { cause: parsed.error });
        logger.error(`${name}: malformed message`, { messageId: record.messageId, eventId: raw.eventId, detailType: (body as Record<string, unknown> | null)?.['detail-type'], err });
        throw err;
      }
      const envelope = parsed.data as BusEnvelope<z.output<S>>;
      try {
        await handle(envelope.detail, envelope, batch);
      } catch (err) {
        logger.error(`${name}: handling failed`, { messageId: record.messageId, eventId: envelope.detail.eventId, receives: record.attributes?.ApproximateReceiveCount, err });
        throw err;
      }
    });
  }
  return async function consume(event: SQSEvent): Promise<SQSBatchResponse> {
    let failures = 0;
    const batch = batchMemo();
    const response = await processSqsBatch(event, async (record) => {
      try {
        await consumeOne(record, batch);
      } catch (err) {
        failures++;
        await backOff(name, record);
        throw err;
      }
    });
    if (failures) recordMetric(METRICS.consumerFailures, failures);
    return response;
  };
}
