import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { configuredBus } from '#shared/events/bus.ts';
import { publishStreamBatch } from '#shared/events/publisher.ts';

const bus = await configuredBus();

/**
 * DynamoDB Streams consumer of the table (filtered to INSERTs of outbox items):
 * puts each event on the bus and removes its outbox item. Unaccepted events
 * are reported by sequence number so the stream retries from there.
 */
export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => publishStreamBatch(bus, event);
