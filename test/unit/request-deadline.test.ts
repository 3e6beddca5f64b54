import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { ServiceUnavailableError } from '#shared/domain/errors.ts';

// A store that answers every call after 1 s (an empty JSON object: a PutItem's or GetItem's answer), in place of DynamoDB.
let calls = 0;
const store = createServer((req, res) => {
  calls++;
  req.resume();
  setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' }).end('{}'), 1_000);
});
await new Promise<void>((resolve) => store.listen(0, '127.0.0.1', resolve));
afterAll(() => {
  store.closeAllConnections();
  return new Promise<void>((resolve) => store.close(() => resolve()));
});
// The client reads its endpoint once, when first loaded: this file's store, not the unit tests' discard port.
process.env.DYNAMODB_ENDPOINT = `http://127.0.0.1:${(store.address() as AddressInfo).port}`;
const { ddb, DDB_TIMEOUTS, withRequestScope } = await import('#shared/db/client.ts');

describe("a request's deadline on its DynamoDB calls", () => {
  it('does not start a write whose request timeout would run past the deadline: 503 at once, nothing sent', async () => {
    calls = 0;

    const err = await withRequestScope({ deadline: Date.now() + DDB_TIMEOUTS.requestTimeout - 200 }, () => ddb.send(new PutCommand({ TableName: 't', Item: { pk: 'x', sk: 'y' } }))).catch((e) => e);

    // Nothing reached the store, so nothing was waited for: the 503 came at once (counted, not timed).
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(calls).toBe(0);
  });

  it('stops waiting for a read at the deadline (a read abandoned in flight changes nothing)', async () => {
    calls = 0;

    const err = await withRequestScope({ deadline: Date.now() + 200 }, () => ddb.send(new GetCommand({ TableName: 't', Key: { pk: 'x', sk: 'y' } }))).catch((e) => e);

    // The store answers every call with success after 1 s: a 503 means the read was given up before that answer.
    expect(err).toBeInstanceOf(ServiceUnavailableError);
    expect(calls).toBe(1);
  });
});
