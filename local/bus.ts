import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { sqsCalls } from './sqs-calls.ts';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BusEntry, EventBusPort, PutEventsResult } from '#shared/events/bus.ts';
import { entrySize, MAX_ENTRY_BYTES } from '#shared/events/entry-size.ts';
import { escapeForTransport, sqsBodyProblem } from '#shared/events/transport.ts';
import { LocalArchive } from './archive.ts';
import { BusRequestError, busControl } from './bus-control.ts';
import { targetQueues, type LocalRule } from './bus-rules.ts';
import type { BusArchive } from './lambda/deployment.ts';
import { LOCAL_STAGE } from './lambda/template.ts';
import { withoutSdkLogger } from '#shared/sdk-client.ts';

/** The EventBridge event as EventBridge delivers it to an SQS target: the message body consumers parse. */
export function busEnvelope(entry: BusEntry, region: string) {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': entry.detailType,
    source: entry.source,
    account: LOCAL_STAGE.account,
    // EventBridge stamps whole seconds.
    time: (entry.time ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [],
    detail: JSON.parse(entry.detail),
  };
}

/** What PutEvents throws for a request it refuses as a whole. */
export class BusValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationException';
  }
}

/**
 * The local stack's event bus. No EventBridge emulator exists, so this routes
 * each entry by the rules of the synthesized template (local/lambda/deployment.ts)
 * to the fauxqs queues, wrapped exactly as EventBridge wraps it. It is as
 * strict as EventBridge: at most 10 entries and 256 KB per request (counted as
 * EventBridge counts entries), a detail that must be a JSON object. An entry
 * whose queues cannot all be reached is reported failed, like a PutEvents
 * partial failure, so the publisher's retry path runs locally too.
 */
export function localBus(rules: readonly LocalRule[], region: string, sqsEndpoint: string, archive?: LocalArchive): EventBusPort {
  // EventBridge's delivery to its targets is not the caller's work: in process when the queues are (local/sqs-calls.ts).
  const sqs = sqsCalls(sqsEndpoint, region);
  return {
    async putEvents(entries) {
      if (entries.length > 10) throw new BusValidationError("1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length less than or equal to 10");
      const total = entries.reduce((n, e) => n + entrySize(e), 0);
      if (total > MAX_ENTRY_BYTES) throw new BusValidationError(`Total size of the entries in the request is over the limit (${total} bytes > ${MAX_ENTRY_BYTES})`);
      const result: PutEventsResult = { failedEntryCount: 0, entries: [] };
      // Entries are independent: they go out in parallel, as EventBridge fans them out.
      result.entries = await Promise.all(
        entries.map(async (entry) => {
          let envelope: ReturnType<typeof busEnvelope>;
          try {
            envelope = busEnvelope(entry, region);
            if (!envelope.detail || typeof envelope.detail !== 'object' || Array.isArray(envelope.detail)) throw new Error('Detail is not a JSON object');
          } catch (err) {
            return { errorCode: 'MalformedDetail', errorMessage: (err as Error).message };
          }
          // As EventBridge hands it to SQS: characters a queue refuses in a raw body are JSON-escaped, and a message
          // SQS would still refuse (over 256 KB) will never go through. In AWS it lands in the rule target's DLQ;
          // here it is refused permanently, so the publisher parks it instead of retrying.
          const body = escapeForTransport(JSON.stringify(envelope));
          const problem = sqsBodyProblem(body);
          if (problem) return { errorCode: 'InvalidArgument', errorMessage: problem };
          try {
            // Archived first (appended before the answer, so an accepted event survives a crash), then routed.
            if (archive?.keeps(envelope)) await archive.append([envelope]);
            const urls = targetQueues(rules, envelope);
            await Promise.all(urls.map((QueueUrl) => sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: body }))));
            return { eventId: envelope.id };
          } catch (err) {
            // EventBridge accepted the entry; a target it cannot reach is retried by EventBridge, not the caller.
            // Locally the caller's retry stands in for that, so the entry is reported as an internal failure.
            return { errorCode: 'InternalFailure', errorMessage: (err as Error).message };
          }
        }),
      );
      result.failedEntryCount = result.entries.filter((e) => e.errorCode).length;
      return result;
    },
  };
}

const readJson = (req: IncomingMessage) =>
  new Promise<unknown>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}'));
      } catch (err) {
        reject(err);
      }
    });
    req.on('error', reject);
  });

export interface LocalEventBridge {
  /** The endpoint functions reach through AWS_ENDPOINT_URL_EVENTBRIDGE. */
  endpoint: string;
  busArn: string;
  /** The archive's ARN, when the bus keeps one (the template has an archive and the stack a data directory). */
  archiveArn?: string;
  stop(): Promise<void>;
}

/**
 * The local bus on the wire: an HTTP endpoint speaking EventBridge's
 * `AWSEvents.PutEvents` (AWS JSON 1.1), so the deployed publisher code and its
 * SDK client run unchanged against it. Entries for another bus are refused as
 * EventBridge refuses an unknown bus.
 */
export async function startLocalEventBridge(opts: {
  busName: string;
  rules: readonly LocalRule[];
  region: string;
  sqsEndpoint: string;
  port?: number;
  account?: string;
  /** The template's archive and the folder its days are kept in (DATA_DIR/archive). */
  archive?: { def: BusArchive; root: string };
}): Promise<LocalEventBridge> {
  const account = opts.account ?? LOCAL_STAGE.account;
  const busArn = `arn:aws:events:${opts.region}:${account}:event-bus/${opts.busName}`;
  const archive = opts.archive && new LocalArchive(opts.archive.root, opts.archive.def);
  await archive?.prune();
  const archiveArn = archive && `arn:aws:events:${opts.region}:${account}:archive/${archive.def.name}`;
  // One list of rules: the template's, and those added at run time (bus-control.ts), routed alike.
  const rules: LocalRule[] = [...opts.rules];
  const bus = localBus(rules, opts.region, opts.sqsEndpoint, archive);
  const control = busControl({
    busName: opts.busName,
    busArn,
    region: opts.region,
    account,
    rules,
    archive,
    archiveArn,
    sqs: withoutSdkLogger(new SQSClient({ region: opts.region, endpoint: opts.sqsEndpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })),
    sqsEndpoint: opts.sqsEndpoint,
  });
  const error = (type: string, message: string) => ({ status: 400, body: { __type: type, message } });
  const server = createServer(async (req, res) => {
    let out: { status: number; body: unknown };
    try {
      const target = String(req.headers['x-amz-target'] ?? '');
      const input = (await readJson(req)) as { Entries?: Array<{ Source?: string; DetailType?: string; Detail?: string; EventBusName?: string; Time?: number }> };
      if (target !== 'AWSEvents.PutEvents') out = { status: 200, body: await control.handle(target.replace(/^AWSEvents\./, ''), input) };
      else if (!Array.isArray(input.Entries) || input.Entries.length === 0)
        out = error('ValidationException', "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length greater than or equal to 1");
      else {
        const foreign = input.Entries.find((e) => (e.EventBusName ?? 'default') !== opts.busName && !String(e.EventBusName).endsWith(`:event-bus/${opts.busName}`));
        if (foreign) out = error('ResourceNotFoundException', `Event bus ${foreign.EventBusName ?? 'default'} does not exist.`);
        else {
          const result = await bus.putEvents(
            input.Entries.map((e) => ({ source: e.Source ?? '', detailType: e.DetailType ?? '', detail: e.Detail ?? '', time: e.Time === undefined ? undefined : new Date(e.Time * 1000) })),
          );
          out = {
            status: 200,
            body: {
              FailedEntryCount: result.failedEntryCount,
              Entries: result.entries.map((e) => (e.errorCode ? { ErrorCode: e.errorCode, ErrorMessage: e.errorMessage } : { EventId: e.eventId })),
            },
          };
        }
      }
    } catch (err) {
      out = err instanceof BusValidationError || err instanceof BusRequestError ? error(err.name, err.message) : error('SerializationException', (err as Error).message);
    }
    res.writeHead(out.status, { 'Content-Type': 'application/x-amz-json-1.1', 'x-amzn-RequestId': randomUUID() });
    res.end(JSON.stringify(out.body));
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    busArn,
    archiveArn,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
