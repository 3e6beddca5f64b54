/**
 * A local DynamoDB proxy: the endpoint the deployed functions reach
 * (`AWS_ENDPOINT_URL_DYNAMODB`) when something has to see their store
 * traffic. Each function runs in its own worker with its own SDK client
 * (local/lambda/), so neither a counter nor a test hook inside this process
 * sees its calls; the wire does. Every request goes to DynamoDB Local
 * unchanged (streamed, over keep-alive connections) and is counted per
 * operation with its [start, end] span. Two options change that:
 *
 * - `consumedCapacity`: data-plane requests get `ReturnConsumedCapacity:
 *   TOTAL` (unless they ask for more) and the capacity in their answers is
 *   summed, as the bench used to force on its own client;
 * - `inject`: a hook that may answer an attempt in DynamoDB's place (a
 *   throttle, a 500, every batch key unprocessed) or drop its connection; the
 *   function's SDK sees a real answer and retries it as it would in AWS. It
 *   may also let an attempt do its work and withhold the answer (`lost`): the
 *   write commits, and the function's SDK times out on it, as when DynamoDB's
 *   answer is slower than the client's request timeout.
 */
import { Agent, createServer, request as upstreamRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tally of DynamoDB calls: what the benchmark reports per API call. */
export interface DdbCallStats {
  requests: number;
  byCommand: Record<string, number>;
  capacityUnits: number;
  /** The capacity units split as DynamoDB bills them on demand: read request units and write request units (consumedCapacity on). */
  readUnits: number;
  writeUnits: number;
  /** Items the store read for the answers (Query/Scan ScannedCount, GetItem's item, BatchGetItem's responses); counted with consumedCapacity on. */
  itemsRead: number;
  millis: number;
  /** [start, end] of each call, to find the round trips on the critical path. */
  spans: Array<[number, number]>;
}

/**
 * Round trips on the critical path: calls that overlap in time ran in
 * parallel and count once; each gap starts a new sequential step.
 */
export function sequentialSteps(spans: Array<[number, number]>): number {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let steps = 0;
  let end = -Infinity;
  for (const [s, e] of sorted) {
    if (s >= end) steps += 1;
    end = Math.max(end, e);
  }
  return steps;
}

/** What an injected attempt gets instead of DynamoDB Local's answer. */
export type StoreAnswer =
  /** An HTTP answer in DynamoDB's JSON protocol (`body` is serialised). */
  | { status: number; body: unknown }
  /** The connection is dropped before any answer: the SDK sees a network error (ECONNRESET). */
  | { reset: true }
  /** The request goes on to DynamoDB Local, which does its work (a write commits); the answer is withheld until the caller gives up (its request timeout). */
  | { lost: true };

/**
 * Called for every request with its operation (`GetItem`, `TransactWriteItems`,
 * `GetRecords`, ...) and its JSON body (DynamoDB wire format: `{"S": "..."}`);
 * `undefined` lets the request through.
 */
export type StoreFailureHook = (operation: string, request: Record<string, any>) => StoreAnswer | undefined;

/** DynamoDB's answer to a throttled or failed request, as the SDK parses it (`__type` names the exception). */
export const storeError = (type: string, message: string, status = 400): StoreAnswer => ({
  status,
  body: { __type: `${type.includes('#') ? '' : 'com.amazonaws.dynamodb.v20120810#'}${type}`, message },
});

/** Answers a hook can give, named as DynamoDB names them. */
export const STORE_ANSWERS = {
  throughputExceeded: (message = 'injected: provisioned throughput exceeded') => storeError('ProvisionedThroughputExceededException', message),
  throttling: (message = 'injected: rate of requests exceeds the allowed throughput') => storeError('com.amazon.coral.availability#ThrottlingException', message),
  internalError: (message = 'injected: internal server error') => storeError('InternalServerError', message, 500),
  /** BatchGetItem when DynamoDB reads nothing: every requested key handed back as unprocessed. */
  allUnprocessed: (request: Record<string, any>): StoreAnswer => ({ status: 200, body: { Responses: {}, UnprocessedKeys: request.RequestItems ?? {} } }),
  connectionReset: (): StoreAnswer => ({ reset: true }),
  /** The work done, the answer never sent: the caller cannot tell whether its write committed. */
  answerLost: (): StoreAnswer => ({ lost: true }),
} as const;

/** Operations that accept ReturnConsumedCapacity (the data plane). */
const CAPACITY_OPERATIONS = new Set(['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchGetItem', 'BatchWriteItem', 'TransactGetItems', 'TransactWriteItems']);

/** Headers that belong to one connection, not to the request or answer. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

const endToEnd = (headers: IncomingHttpHeaders): IncomingHttpHeaders => Object.fromEntries(Object.entries(headers).filter(([k]) => !HOP_BY_HOP.has(k)));

/** Operations whose capacity is read units (the rest of CAPACITY_OPERATIONS consume write units). */
const READ_OPERATIONS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

/**
 * An answer's ConsumedCapacity as [read, write] units: the split DynamoDB
 * reports where it does (ReadCapacityUnits, WriteCapacityUnits), else the
 * total by the operation's kind (DynamoDB Local reports only CapacityUnits).
 */
const capacityOf = (c: unknown, operation: string): [number, number] => {
  if (!c) return [0, 0];
  if (Array.isArray(c)) return c.reduce((s: [number, number], x) => ((v) => [s[0] + v[0], s[1] + v[1]])(capacityOf(x, operation)), [0, 0]);
  const { CapacityUnits = 0, ReadCapacityUnits, WriteCapacityUnits } = c as { CapacityUnits?: number; ReadCapacityUnits?: number; WriteCapacityUnits?: number };
  if (ReadCapacityUnits !== undefined || WriteCapacityUnits !== undefined) return [Number(ReadCapacityUnits ?? 0), Number(WriteCapacityUnits ?? 0)];
  return READ_OPERATIONS.has(operation) ? [Number(CapacityUnits), 0] : [0, Number(CapacityUnits)];
};

/** Items an answer read: a Query's or Scan's ScannedCount, a GetItem's item, a BatchGetItem's or TransactGetItems' responses. */
function itemsIn(answer: Record<string, unknown>): number {
  if (typeof answer.ScannedCount === 'number') return answer.ScannedCount;
  if (answer.Item) return 1;
  if (Array.isArray(answer.Responses)) return answer.Responses.filter((r: { Item?: unknown } | null) => r?.Item).length;
  if (answer.Responses && typeof answer.Responses === 'object' && !Array.isArray(answer.Responses)) {
    return Object.values(answer.Responses as Record<string, unknown[]>).reduce((n, list) => n + (Array.isArray(list) ? list.length : 0), 0);
  }
  return 0;
}

export interface DynamoDbProxy {
  /** The URL to give the functions as their DynamoDB endpoint. */
  endpoint: string;
  /** Add ReturnConsumedCapacity to data-plane requests and sum what the answers report (default off: requests pass byte for byte). */
  consumedCapacity: boolean;
  /** Install (or, with undefined, remove) the failure hook. */
  inject(hook: StoreFailureHook | undefined): void;
  /** What went through since the last reset, in the shape of the bench's DdbCallStats; starts a new tally. */
  reset(): DdbCallStats & { criticalPath: number };
  stop(): Promise<void>;
}

/**
 * Start the proxy on `port` (0: a free one) in front of `upstream` (DynamoDB
 * Local's endpoint). A request counts once its answer is complete (or
 * injected, or failed); requests are HTTP attempts, so an SDK retry counts
 * again, as DynamoDB would bill it.
 */
export async function startDynamoDbProxy(opts: { upstream: string; port?: number; consumedCapacity?: boolean }): Promise<DynamoDbProxy> {
  const upstream = new URL(opts.upstream);
  const agent = new Agent({ keepAlive: true });
  let hook: StoreFailureHook | undefined;
  const empty = (): DdbCallStats => ({ requests: 0, byCommand: {}, capacityUnits: 0, readUnits: 0, writeUnits: 0, itemsRead: 0, millis: 0, spans: [] });
  let stats = empty();

  const record = (operation: string, started: number, capacity: [number, number] = [0, 0], items = 0) => {
    const ended = performance.now();
    stats.requests += 1;
    stats.byCommand[operation] = (stats.byCommand[operation] ?? 0) + 1;
    stats.capacityUnits += capacity[0] + capacity[1];
    stats.readUnits += capacity[0];
    stats.writeUnits += capacity[1];
    stats.itemsRead += items;
    stats.millis += ended - started;
    stats.spans.push([started, ended]);
  };

  /** Send the request on to DynamoDB Local and its answer back; `body` replaces the streamed request body when it was read. */
  const forward = (req: IncomingMessage, res: ServerResponse, operation: string, started: number, body: Buffer | undefined, readCapacity: boolean) => {
    const headers = endToEnd(req.headers);
    if (body) headers['content-length'] = String(body.length);
    const up = upstreamRequest({ protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, endToEnd(upRes.headers));
      const chunks: Buffer[] = [];
      if (readCapacity) upRes.on('data', (c: Buffer) => chunks.push(c));
      // Counted before the answer's last byte goes on to the function, so a caller that resets right after its call sees it.
      upRes.on('end', () => {
        let capacity: [number, number] = [0, 0];
        let items = 0;
        if (readCapacity) {
          try {
            const answer = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            capacity = capacityOf(answer.ConsumedCapacity, operation);
            items = itemsIn(answer);
          } catch {
            // not JSON (an error page): nothing consumed
          }
        }
        record(operation, started, capacity, items);
      });
      upRes.on('error', () => res.destroy());
      upRes.pipe(res);
    });
    // DynamoDB Local unreachable: the function sees its connection drop, as it would with the real endpoint.
    up.on('error', () => {
      if (!res.writableEnded) {
        record(operation, started);
        res.destroy();
      }
    });
    // The SDK gave up on this attempt (its request timeout): stop waiting upstream too.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    if (body) up.end(body);
    else req.pipe(up);
  };

  /** Send the request to DynamoDB Local and read its whole answer (the work is done), but never answer: the caller's request timeout ends the exchange. */
  const withhold = (req: IncomingMessage, body: Buffer, operation: string, started: number) => {
    const headers = { ...endToEnd(req.headers), 'content-length': String(body.length) };
    const up = upstreamRequest({ protocol: upstream.protocol, hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers, agent }, (upRes) => {
      upRes.resume();
      upRes.on('end', () => record(operation, started));
    });
    up.on('error', () => record(operation, started));
    up.end(body);
  };

  const server = createServer((req, res) => {
    const started = performance.now();
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.slice(target.indexOf('.') + 1) || 'unknown';
    const addCapacity = proxy.consumedCapacity && CAPACITY_OPERATIONS.has(operation);
    const current = hook;
    // Plain counting streams the request through; the options need its JSON.
    if (!current && !addCapacity) return forward(req, res, operation, started, undefined, false);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', () => res.destroy());
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let json: Record<string, any>;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        // Not a JSON request (DynamoDB Local will say so): pass it as it came.
        return forward(req, res, operation, started, raw, false);
      }
      const answer = current?.(operation, json);
      if (answer && 'lost' in answer) return withhold(req, raw, operation, started);
      if (answer && 'reset' in answer) {
        record(operation, started);
        return req.socket.destroy();
      }
      if (answer) {
        const body = JSON.stringify(answer.body);
        res.writeHead(answer.status, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': `injected-${stats.requests}` });
        res.end(body);
        return record(operation, started);
      }
      if (!addCapacity) return forward(req, res, operation, started, raw, false);
      if (json.ReturnConsumedCapacity !== 'INDEXES') json.ReturnConsumedCapacity = 'TOTAL';
      forward(req, res, operation, started, Buffer.from(JSON.stringify(json)), true);
    });
  });
  // Longer than the SDK keeps an idle socket, so a reused connection is never closed under it.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });

  const proxy: DynamoDbProxy = {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    consumedCapacity: opts.consumedCapacity ?? false,
    inject(h) {
      hook = h;
    },
    reset() {
      const snapshot = { ...stats, criticalPath: sequentialSteps(stats.spans) };
      stats = empty();
      return snapshot;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          agent.destroy();
          resolve();
        });
      }),
  };
  return proxy;
}
