import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { configuredBus } from '#shared/events/bus.ts';
import { publishStreamBatch } from '#shared/events/publisher.ts';

const bus = await configuredBus();

/**
 * DynamoDB Streams consumer of the table (filtered to INSERTs of outbox items):
 * puts each event on the bus and removes its outbox item. It reports no record
 * back to the stream (one refused event must not hold the shard): events the
 * bus refuses for good are parked, the rest stay pending for the sweeper.
 */
export const handler = async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => publishStreamBatch(bus, event);
