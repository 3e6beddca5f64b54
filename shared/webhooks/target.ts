import type { LookupAddress } from 'node:dns';
import { Resolver } from 'node:dns/promises';
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
  ['100::', 64],
] as const)
  blocked.addSubnet(net, prefix, 'ipv6');

/** The 8 hextets of an IPv6 address (zone id dropped, an embedded dotted quad folded in), or null. */
function hextets(address: string): number[] | null {
  let a = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (quad) {
    const [b0, b1, b2, b3] = quad.slice(1).map(Number);
    a = `${a.slice(0, quad.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const parts = [...head, ...Array(missing).fill('0'), ...tail].map((h) => parseInt(h, 16));
  return parts.length === 8 && parts.every((n) => Number.isInteger(n) && n >= 0 && n <= 0xffff) ? parts : null;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/**
 * The IPv4 addresses an IPv6 address carries to the network: IPv4-compatible
 * (::a.b.c.d), IPv4-mapped (::ffff:a.b.c.d), SIIT (::ffff:0:a.b.c.d), NAT64
 * well-known prefix (64:ff9b::/96), 6to4 (2002:AABB:CCDD::/16) and Teredo
 * (2001:0::/32: server in bits 32-63, client obfuscated in the last 32).
 */
function embeddedIpv4(h: number[]): string[] {
  const zero = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  if (zero(0, 6)) return [v4(h[6], h[7])];
  if (zero(0, 5) && h[5] === 0xffff) return [v4(h[6], h[7])];
  if (zero(0, 4) && h[4] === 0xffff && h[5] === 0) return [v4(h[6], h[7])];
  if (h[0] === 0x64 && h[1] === 0xff9b && zero(2, 6)) return [v4(h[6], h[7])];
  if (h[0] === 0x2002) return [v4(h[1], h[2])];
  if (h[0] === 0x2001 && h[1] === 0) return [v4(h[2], h[3]), v4(h[6] ^ 0xffff, h[7] ^ 0xffff)];
  return [];
}

/**
 * Is this IP address one a deployed stack must not connect to? An IPv6 form
 * that carries an IPv4 address is judged by that address; the local-use NAT64
 * prefix 64:ff9b:1::/48 (RFC 8215) only ever leads into a private network.
 */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address.replace(/%.*$/, ''));
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const h = hextets(address);
  if (!h) return true;
  if (h[0] === 0x64 && h[1] === 0xff9b && h[2] === 1) return true;
  const inside = embeddedIpv4(h);
  if (inside.length) return inside.some((a) => blocked.check(a, 'ipv4'));
  return blocked.check(h.map((x) => x.toString(16)).join(':'), 'ipv6');
}

/** The target refused before any connection: the reason goes to the delivery log. */
export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/** Answers a host name's addresses; given the abort signal of the time bound. */
export type Resolve = (hostname: string, signal: AbortSignal) => Promise<LookupAddress[]>;

export interface TargetPolicy {
  allowPrivate: boolean;
  allowInsecureTls: boolean;
  timeoutMs: number;
  /** Time allowed for the DNS answer (default 2 s): a slow resolver fails this attempt only. */
  dnsTimeoutMs?: number;
  /** The resolver (default: DNS queries over c-ares); tests inject a slow one. */
  resolve?: Resolve;
}

const DEFAULT_DNS_TIMEOUT_MS = 2_000;

/**
 * DNS queries (A and AAAA) through c-ares, not getaddrinfo: getaddrinfo runs
 * on libuv's 4 worker threads, so a few hanging names would hold every other
 * delivery's lookup (and file I/O) behind them. "localhost" names are
 * loopback by definition (RFC 6761) and never queried.
 */
export const dnsResolve: Resolve = async (hostname, signal) => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost'))
    return [
      { address: '127.0.0.1', family: 4 },
      { address: '::1', family: 6 },
    ];
  const resolver = new Resolver({ timeout: DEFAULT_DNS_TIMEOUT_MS, tries: 2 });
  signal.addEventListener('abort', () => resolver.cancel(), { once: true });
  const [a, aaaa] = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const found = [
    ...(a.status === 'fulfilled' ? a.value.map((address) => ({ address, family: 4 })) : []),
    ...(aaaa.status === 'fulfilled' ? aaaa.value.map((address) => ({ address, family: 6 })) : []),
  ];
  if (found.length) return found;
  throw a.status === 'rejected' ? a.reason : new Error(`no address for ${hostname}`);
};

/** Settle with the resolver's answer, or fail when the time bound passes first (the resolver is told to stop). */
async function boundedResolve(resolve: Resolve, hostname: string, timeoutMs: number): Promise<LookupAddress[]> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`DNS lookup took longer than ${timeoutMs / 1000} s`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([resolve(hostname, controller.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * DNS resolution with the SSRF check in it: the socket connects to exactly the
 * address that was checked (no second lookup an attacker's DNS could answer
 * differently). Any blocked address among the answers refuses the target.
 * The refusal does not name the address: the delivery log is the tenant's,
 * and internal addresses are not theirs to map.
 */
function guardedLookup(policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    boundedResolve(policy.resolve ?? dnsResolve, hostname, policy.dnsTimeoutMs ?? DEFAULT_DNS_TIMEOUT_MS).then(
      (answers) => {
        const addresses = options.family ? answers.filter((a) => a.family === options.family) : answers;
        if (!policy.allowPrivate && addresses.some((a) => isBlockedAddress(a.address))) return callback(new TargetRefusedError('target resolves to a disallowed address'), '', 0);
        if (!addresses.length) return callback(new Error(`no address for ${hostname}`), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, addresses[0].address, addresses[0].family);
      },
      (err: Error) => callback(err, '', 0),
    );
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

/** Failure reasons for the delivery log, without the addresses a system error message would carry. */
const REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the target',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host name not found',
  ENODATA: 'host name has no address',
  ESERVFAIL: 'DNS server failure',
  ECANCELLED: 'DNS lookup cancelled',
  EPIPE: 'connection closed by the target',
};

function describeFailure(err: Error & { code?: string }, policy: TargetPolicy): Error {
  if (err instanceof TargetRefusedError) return err;
  if (err.name === 'AbortError' || err.name === 'TimeoutError') return new Error(`no answer within ${policy.timeoutMs / 1000} s`);
  if (err.message.startsWith('DNS lookup took longer')) return err;
  if (err.code && REASONS[err.code]) return new Error(REASONS[err.code]);
  if (err.code && /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO/i.test(err.code)) return new Error(`TLS certificate not accepted (${err.code})`);
  return new Error(`request failed (${err.code ?? err.name})`);
}

/**
 * POST a body to an https target under the policy: no redirects followed
 * (a 3xx is a failed attempt), one overall timeout, the DNS answer bounded in
 * time. Only the status and headers are read: the answer's body is dropped
 * unread, so a receiver streaming without end costs nothing. Rejects with the
 * reason when no HTTP answer came.
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
    if (isIP(host) && !policy.allowPrivate && isBlockedAddress(host)) return reject(new TargetRefusedError('target address is disallowed'));
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'support-desk-webhooks/1', 'content-length': Buffer.byteLength(body), ...headers },
        lookup: guardedLookup(policy),
        rejectUnauthorized: !policy.allowInsecureTls,
        agent: agentFor(policy.allowInsecureTls),
        signal: AbortSignal.timeout(policy.timeoutMs),
      },
      (res) => {
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, durationMs: Math.round(performance.now() - started) });
        // The status is the answer; whatever body follows is not read.
        res.destroy();
      },
    );
    req.on('error', (err) => reject(describeFailure(err, policy)));
    req.end(body);
  });
}
