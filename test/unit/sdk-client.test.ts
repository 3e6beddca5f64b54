import { Readable } from 'node:stream';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { HttpResponse } from '@smithy/core/transport';
import { describe, expect, it } from 'vitest';
import { ddb } from '#shared/db/client.ts';
import { withoutSdkLogger } from '#shared/sdk-client.ts';

/** An HTTP handler answering every call with one canned GetItem answer: the SDK runs its whole middleware stack. */
const canned = {
  handle: async () => ({
    response: new HttpResponse({ statusCode: 200, headers: { 'content-type': 'application/x-amz-json-1.0' }, body: Readable.from([Buffer.from('{"Item":{"PK":{"S":"a"},"n":{"N":"1"}}}')]) }),
  }),
  updateHttpClientConfig() {},
  httpHandlerConfigs: () => ({}),
};

function clientLogging(lines: unknown[]) {
  const logger = { trace() {}, debug() {}, info: (line: unknown) => lines.push(line), warn() {}, error() {} };
  return new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, requestHandler: canned, logger });
}

describe('SDK clients without the logger middleware', () => {
  it("withoutSdkLogger takes out the middleware that filters each call's input and output for a logger", async () => {
    const withIt: unknown[] = [];
    const without: unknown[] = [];
    const get = () => new GetCommand({ TableName: 't', Key: { PK: 'a' } });
    expect((await clientLogging(withIt).send(get())).Item).toEqual({ PK: 'a', n: 1 });
    expect((await withoutSdkLogger(clientLogging(without)).send(get())).Item).toEqual({ PK: 'a', n: 1 });
    // The SDK names the middleware `loggerMiddleware`: had it been renamed, the second client would still log.
    expect(withIt).toHaveLength(1);
    expect(without).toEqual([]);
  });

  it("the functions' DynamoDB client has no logger middleware", () => {
    expect(ddb.middlewareStack.identify().join('\n')).not.toMatch(/loggerMiddleware/);
    expect(ddb.middlewareStack.identify().length).toBeGreaterThan(5);
  });
});
