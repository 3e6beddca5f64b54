import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent, request } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a webhook may never reach in a deployed stack (SSRF, decisions §7):
 * loopback, private, shared (CGNAT), link-local (including the instance
 * metadata service 169.254.169.254 and fd00:ec2::254), unspecified, multicast
 * and reserved ranges, and IPv4-mapped/NAT64 forms of them.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** Is this IP address one a deployed stack must not connect to? */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d) reach the embedded IPv4 address.
  const embedded = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower)?.[1] ?? mappedHex(lower);
  if (embedded) return blocked.check(embedded, 'ipv4');
  return blocked.check(address, 'ipv6');
}

/** ::ffff:7f00:1 style (hex) IPv4-mapped addresses. */
function mappedHex(address: string): string | undefined {
  const m = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(address);
  if (!m) return undefined;
  const hi = parseInt(m[1], 16);
  const lo = parseInt(m[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The target refused before any connection: the reason goes to the delivery log. */
export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

export interface TargetPolicy {
  allowPrivate: boolean;
  allowInsecureTls: boolean;
  timeoutMs: number;
}

/**
 * DNS resolution with the SSRF check in it: the socket connects to exactly the
 * address that was checked (no second lookup an attacker's DNS could answer
 * differently). Any blocked address among the answers refuses the target.
 */
function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, verbatim: true, family: options.family }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      if (!allowPrivate) {
        const bad = addresses.find((a) => isBlockedAddress(a.address));
        if (bad) return callback(new TargetRefusedError(`target resolves to a disallowed address (${bad.address})`), '', 0);
      }
      if (!addresses.length) return callback(new Error(`no address for ${hostname}`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

/**
 * Connections to one target host (host:port) at once, per process: a tenant
 * whose receivers are slow occupies at most this many, and the deliveries to
 * every other host keep their own sockets. With the delivery queue's
 * maxConcurrency this bounds the deployed stack's load on any one host.
 */
export const MAX_CONNECTIONS_PER_HOST = 8;

/**
 * Kept-alive connections per target host: a burst of deliveries to one
 * receiver pays the TCP and TLS handshakes once, not per delivery (they were
 * the delivery path's largest CPU cost). Reuse is safe for the SSRF check:
 * a pooled socket is connected to an address that passed it at connect time.
 */
const agents = new Map<boolean, Agent>();
const agentFor = (allowInsecureTls: boolean) => {
  let agent = agents.get(allowInsecureTls);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS_PER_HOST, maxFreeSockets: MAX_CONNECTIONS_PER_HOST, timeout: 30_000, rejectUnauthorized: !allowInsecureTls });
    agents.set(allowInsecureTls, agent);
  }
  return agent;
};

export interface PostResult {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  durationMs: number;
}

/**
 * POST a body to an https target under the policy: no redirects followed
 * (a 3xx is a failed attempt), one overall timeout, the answer's body
 * read and discarded. Rejects with the reason when no HTTP answer came.
 */
export function postToTarget(targetUrl: string, headers: Record<string, string>, body: string, policy: TargetPolicy): Promise<PostResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(targetUrl);
    } catch {
      return reject(new TargetRefusedError('target URL is invalid'));
    }
    if (url.protocol !== 'https:') return reject(new TargetRefusedError('target URL is not https'));
    const host = url.hostname.replace(/^\[|\]$/g, '');
    // IP literals skip DNS, so they are checked here.
    if (isIP(host) && !policy.allowPrivate && isBlockedAddress(host)) return reject(new TargetRefusedError(`target address is disallowed (${host})`));
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'support-desk-webhooks/1', 'content-length': Buffer.byteLength(body), ...headers },
        lookup: guardedLookup(policy.allowPrivate),
        rejectUnauthorized: !policy.allowInsecureTls,
        agent: agentFor(policy.allowInsecureTls),
        signal: AbortSignal.timeout(policy.timeoutMs),
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, durationMs: Math.round(performance.now() - started) }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => reject(err.name === 'AbortError' || err.name === 'TimeoutError' ? new Error(`no answer within ${policy.timeoutMs / 1000} s`) : err));
    req.end(body);
  });
}
