import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushAuthorizerCache } from '#shared/auth/authorizer-cache.ts';
import { forgetReadSettings } from '#shared/config/settings.ts';

/** A control plane that records the FlushStageAuthorizersCache calls it gets, answering as API Gateway does. */
async function controlPlane(): Promise<{ endpoint: string; paths: string[]; server: Server }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    req.resume();
    paths.push(`${req.method} ${req.url}`);
    res.writeHead(202, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, paths, server };
}

describe('flushAuthorizerCache', () => {
  let first: Awaited<ReturnType<typeof controlPlane>>;
  let second: Awaited<ReturnType<typeof controlPlane>>;
  beforeAll(async () => {
    [first, second] = await Promise.all([controlPlane(), controlPlane()]);
    Object.assign(process.env, { AUTHORIZER_CACHE_REST_API_ID: 'api1', AUTHORIZER_CACHE_STAGE: 'live', AUTHORIZER_CACHE_TTL_SECONDS: '300' });
    forgetReadSettings();
  });
  afterAll(() => Promise.all([first, second].map(({ server }) => new Promise((resolve) => server.close(resolve)))));

  it('flushes the control plane of the settings read last, not the first one it flushed (the test runner reads them afresh for each file)', async () => {
    // Arrange
    const flush = 'DELETE /restapis/api1/stages/live/cache/authorizers';
    process.env.AWS_ENDPOINT_URL_API_GATEWAY = first.endpoint;
    await flushAuthorizerCache();
    // Act: the next file's environment
    process.env.AWS_ENDPOINT_URL_API_GATEWAY = second.endpoint;
    forgetReadSettings();
    await flushAuthorizerCache();
    await flushAuthorizerCache();
    // Assert
    expect(first.paths).toEqual([flush]);
    expect(second.paths).toEqual([flush, flush]);
  });
});
