import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBlockedAddress, postToTarget, TargetRefusedError, type TargetPolicy } from '#shared/webhooks/target.ts';

// The SSRF guard and slow receivers (issue 12): pure target rules plus a local HTTPS receiver.
describe('SSRF guard: IPv6 forms that carry a private IPv4 address', () => {
  it.each([
    ['IPv4-compatible, hex', '::7f00:1'],
    ['IPv4-compatible, dotted', '::127.0.0.1'],
    ['IPv4-compatible metadata service', '::a9fe:a9fe'],
    ['IPv4-mapped, hex', '::ffff:7f00:1'],
    ['IPv4-mapped, long form', '0:0:0:0:0:ffff:a00:1'],
    ['SIIT IPv4-translated', '::ffff:0:c0a8:101'],
    ['NAT64 well-known prefix, hex', '64:ff9b::a00:1'],
    ['NAT64 well-known prefix, dotted', '64:ff9b::192.168.0.1'],
    ['NAT64 local-use prefix', '64:ff9b:1::a00:1'],
    ['NAT64 local-use prefix, other layout', '64:ff9b:1:a00:1::'],
    ['6to4 of 10.0.0.1', '2002:a00:1::1'],
    ['6to4 of 127.0.0.1', '2002:7f00:1:0:0:0:0:1'],
    ['6to4 of 169.254.169.254', '2002:a9fe:a9fe::'],
    ['Teredo with a private server', '2001:0:a00:1::1'],
    ['Teredo with a private client (192.168.1.1 obfuscated)', '2001:0:4136:e378:8000:63bf:3f57:fefe'],
    ['loopback with a zone id', '::1%lo'],
    ['link-local with a zone id', 'fe80::1%eth0'],
    ['unspecified', '::'],
    ['discard-only', '100::1'],
  ])('blocks %s (%s)', (_, ip) => {
    expect(isBlockedAddress(ip)).toBe(true);
  });

  it.each([
    ['6to4 of a public address', '2002:808:808::1'],
    ['NAT64 of a public address', '64:ff9b::808:808'],
    ['Teredo with public server and client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'],
    ['IPv4-mapped public', '::ffff:808:808'],
    ['global unicast', '2606:4700::6810:85e5'],
  ])('allows %s (%s)', (_, ip) => {
    expect(isBlockedAddress(ip)).toBe(false);
  });

  it('refuses such literals as targets before connecting, without naming an address in the reason', async () => {
    const policy = { allowPrivate: false, allowInsecureTls: false, timeoutMs: 2000 };
    for (const ip of ['::7f00:1', '64:ff9b::a00:1', '2002:a00:1::1', '2001:0:a00:1::1']) {
      await expect(postToTarget(`https://[${ip}]:9/x`, {}, '{}', policy)).rejects.toBeInstanceOf(TargetRefusedError);
    }
  });
});

describe('DNS answers', () => {
  const base: TargetPolicy = { allowPrivate: false, allowInsecureTls: false, timeoutMs: 5_000 };

  it('a resolver that never answers fails the attempt at the DNS bound, and ten of them at once do not queue', async () => {
    const hanging: TargetPolicy = { ...base, dnsTimeoutMs: 300, resolve: () => new Promise(() => {}) };
    const started = Date.now();
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => postToTarget(`https://hook${i}.example/x`, {}, '{}', hanging)));
    const took = Date.now() - started;
    for (const r of results) expect(r.status === 'rejected' && (r.reason as Error).message).toMatch(/DNS lookup took longer than 0.3 s/);
    expect(took).toBeLessThan(2_000);
  });

  it('the resolver is told to stop when the bound passes', async () => {
    let aborted = false;
    const policy: TargetPolicy = { ...base, dnsTimeoutMs: 100, resolve: (_, signal) => new Promise(() => signal.addEventListener('abort', () => (aborted = true))) };
    await expect(postToTarget('https://slow.example/x', {}, '{}', policy)).rejects.toThrow(/DNS lookup/);
    expect(aborted).toBe(true);
  });

  it('a name resolving to a private address is refused, and the reason does not show the address', async () => {
    for (const address of ['10.1.2.3', '::7f00:1', '64:ff9b::a9fe:a9fe']) {
      const policy: TargetPolicy = {
        ...base,
        resolve: async () => [
          { address: '93.184.216.34', family: 4 },
          { address, family: address.includes(':') ? 6 : 4 },
        ],
      };
      const err = (await postToTarget('https://rebind.example/x', {}, '{}', policy).catch((e: Error) => e)) as Error;
      expect(err).toBeInstanceOf(TargetRefusedError);
      expect(err.message).toBe('target resolves to a disallowed address');
      expect(err.message).not.toContain(address);
    }
  });

  it('localhost names are loopback without asking DNS', async () => {
    await expect(postToTarget('https://localhost:9/x', {}, '{}', base)).rejects.toThrow(/disallowed address/);
    await expect(postToTarget('https://app.localhost:9/x', {}, '{}', base)).rejects.toThrow(/disallowed address/);
  });
});

describe('slow or endless receivers', () => {
  let server: Server;
  let port = 0;
  const fixtures = join(import.meta.dirname, '../fixtures');
  beforeAll(async () => {
    server = createServer({ key: readFileSync(join(fixtures, 'webhook-receiver.key')), cert: readFileSync(join(fixtures, 'webhook-receiver.crt')) }, (req, res) => {
      req.resume();
      req.on('end', () => {
        // An answer whose body never ends.
        res.writeHead(req.url === '/endless-500' ? 500 : 200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        const pump = () => {
          while (!res.destroyed && res.write(chunk));
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('an endless body is not read: the attempt ends at the status, well before the timeout', async () => {
    const policy: TargetPolicy = { allowPrivate: true, allowInsecureTls: true, timeoutMs: 5_000 };
    const started = Date.now();
    const ok = await postToTarget(`https://127.0.0.1:${port}/endless`, {}, '{}', policy);
    const failed = await postToTarget(`https://127.0.0.1:${port}/endless-500`, {}, '{}', policy);
    expect(ok.statusCode).toBe(200);
    expect(failed.statusCode).toBe(500);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a refused connection is logged without its address', async () => {
    const policy: TargetPolicy = { allowPrivate: true, allowInsecureTls: true, timeoutMs: 2_000 };
    const err = (await postToTarget('https://127.0.0.1:9/x', {}, '{}', policy).catch((e: Error) => e)) as Error;
    expect(err.message).toBe('connection refused');
  });
});
