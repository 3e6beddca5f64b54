/**
 * The local stand-in for the stream's event source mapping (local/stream-poller.ts) reads a quiet stream seldom, and
 * at once when nudged: the pipeline nudges it as each function invocation ends (issue 42, part 4), so the idle store
 * is not polled every few hundred milliseconds and the first event after a quiet spell does not wait for that poll.
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord } from 'aws-lambda';
import { afterAll, expect, inject, it } from 'vitest';
import { LOCAL_TABLE } from '../../local/stack.ts';
import { StreamPoller } from '../../local/stream-poller.ts';
import { eventually } from '../support/wait.ts';

const config = { region: 'us-east-1', endpoint: inject('dynamodbEndpoint'), credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
const ddb = new DynamoDBClient(config);
const streams = new DynamoDBStreamsClient(config);
const pollers: StreamPoller[] = [];
afterAll(async () => {
  await Promise.all(pollers.map((p) => p.stop()));
  ddb.destroy();
  streams.destroy();
});

it('reads a quiet stream when nudged, not only at its next idle poll (ten minutes away here)', async () => {
  const accountId = `acct_poller_${Date.now()}`;
  const got: DynamoDBRecord[] = [];
  const tenMinutes = 600_000;
  const poller = new StreamPoller({
    streams,
    table: LOCAL_TABLE,
    region: config.region,
    handler: async (event) => {
      got.push(...event.Records);
      return undefined;
    },
    intervalMs: tenMinutes,
    idleMaxMs: tenMinutes,
    batchSize: 10,
    parallel: 1,
    filter: (r) => r.dynamodb?.NewImage?.accountId?.S === accountId,
  });
  pollers.push(poller);
  await poller.start();
  // A round of reads that found the stream at its end: the poller now pauses for ten minutes.
  await poller.caughtUp();
  await ddb.send(new PutItemCommand({ TableName: LOCAL_TABLE, Item: { pk: { S: `POLLER#${accountId}` }, sk: { S: 'item' }, accountId: { S: accountId } } }));

  poller.nudge();

  await eventually(() => got.length === 1, 10_000, 'the record read after the nudge');
  expect(got[0].dynamodb?.Keys?.pk?.S).toBe(`POLLER#${accountId}`);
});

it('stops at once when stopped in the middle of a read, though its idle pause is ten minutes', async () => {
  const tenMinutes = 600_000;
  // A client of the same emulator that holds the first GetRecords after `armed` until released: stop() then comes
  // while a read is under way, the moment when it used to find no pause to end (the next pause then ran its length).
  let armed = false;
  let release = () => {};
  let reading = () => {};
  const readStarted = new Promise<void>((resolve) => (reading = resolve));
  const held = new DynamoDBStreamsClient(config);
  held.middlewareStack.add(
    (next, context) => async (args) => {
      if (armed && context.commandName === 'GetRecordsCommand') {
        armed = false;
        reading();
        await new Promise<void>((resolve) => (release = resolve));
      }
      return next(args);
    },
    { step: 'initialize' },
  );
  const poller = new StreamPoller({
    streams: held,
    table: LOCAL_TABLE,
    region: config.region,
    handler: async () => undefined,
    intervalMs: tenMinutes,
    idleMaxMs: tenMinutes,
    batchSize: 10,
    parallel: 1,
    filter: () => false,
  });
  await poller.start();
  await poller.caughtUp();
  armed = true;
  poller.nudge();
  await readStarted;

  let stopped = false;
  const stopping = poller.stop().then(() => (stopped = true));
  release();

  await eventually(() => stopped, 10_000, 'the poller stopped');
  await stopping;
  held.destroy();
});
