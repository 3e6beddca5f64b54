import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { SESEvent, SESMailCommonHeaders, SESMailHeader, SESReceiptStatus } from 'aws-lambda';
import { addressParser, decodeWords } from 'postal-mime';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { EMAIL_INBOUND } from '#app/topology.ts';
import type { ReceiptRule } from './lambda/deployment.ts';
import { LOCAL_ACCOUNT, localFunctionArn, type LocalLambda } from './lambda/index.ts';
import { warn } from './pipeline-log.ts';

/**
 * The local stack's mail server (decisions §17): what SES receiving does with
 * the template's receipt rule, over SMTP. At RCPT TO it takes an address of
 * the rule's domain whose account exists (`550 5.1.1` otherwise: deployed,
 * SES takes the mail and the function drops it; locally the sender learns at
 * once). At the end of DATA it runs the rule's actions in their order: the raw
 * message into the bucket under the S3 action's prefix and an SES-like message
 * id, then the Lambda action's function with the receipt event SES would send
 * (verdicts PASS), invoked synchronously: `250` once the function returned,
 * `451 4.3.0` if anything failed, so the client tries again and nothing is lost.
 * No AUTH and no STARTTLS (SES's endpoint offers no AUTH; TLS is optional in
 * the rule); SES's 40 MB limit.
 */
export interface LocalSmtp {
  port: number;
  /** The domain the receipt rule takes mail for (`inbound.localhost`). */
  domain: string;
  stop(): Promise<void>;
}

/** An SMTP reply: its code, and the enhanced status code leading the text (RFC 3463). */
class SmtpReplyError extends Error {
  constructor(
    readonly responseCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'SmtpReplyError';
  }
}

/** The one receipt rule the local server plays, and the domain it takes mail for. */
function inboundRule(lambda: LocalLambda): { rule: ReceiptRule; domain: string } {
  const rules = lambda.deployment.receiptRules;
  if (rules.length !== 1) throw new Error(`The local SMTP server plays one receipt rule; the template has ${rules.length}`);
  const [rule] = rules;
  const domains = rule.recipients.filter((r) => !r.includes('@') && !r.startsWith('.'));
  if (domains.length !== 1) throw new Error(`Receipt rule ${rule.name} must name one domain, not ${rule.recipients.join(', ')}`);
  return { rule, domain: domains[0].toLowerCase() };
}

/** An id of the form SES gives a received mail (lower-case letters and digits): its object key under the S3 action's prefix. */
export function sesMessageId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(40)].map((b) => alphabet[b % alphabet.length]).join('');
}

/** The header fields of a raw message, in order, unfolded (the event's `mail.headers`). */
export function headerFields(raw: Buffer): SESMailHeader[] {
  const text = raw.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const lines = (end === -1 ? text : text.slice(0, end)).split(/\r?\n/);
  const fields: SESMailHeader[] = [];
  for (const line of lines) {
    if (/^[ \t]/.test(line) && fields.length) fields[fields.length - 1].value += ` ${line.trim()}`;
    else {
      const colon = line.indexOf(':');
      if (colon > 0) fields.push({ name: line.slice(0, colon).trim(), value: line.slice(colon + 1).trim() });
    }
  }
  return fields;
}

/** `mail.commonHeaders` as SES fills it: the address lists, date, Message-ID and the decoded subject. */
function commonHeaders(fields: SESMailHeader[], returnPath: string): SESMailCommonHeaders {
  const first = (name: string) => fields.find((f) => f.name.toLowerCase() === name)?.value;
  const addresses = (name: string) => {
    const value = first(name);
    if (value === undefined) return undefined;
    return addressParser(value)
      .flatMap((a) => ('group' in a && a.group ? a.group : [a]))
      .map((a) => (a.name ? `${a.name} <${a.address}>` : (a.address ?? '')));
  };
  const subject = first('subject');
  return {
    returnPath: first('return-path')?.replace(/^<|>$/g, '') ?? returnPath,
    from: addresses('from'),
    to: addresses('to'),
    cc: addresses('cc'),
    replyTo: addresses('reply-to'),
    date: first('date') ?? '',
    messageId: first('message-id') ?? '',
    subject: subject === undefined ? undefined : decodeWords(subject),
  };
}

export async function startLocalSmtp(opts: { port: number; lambda: LocalLambda; host?: string }): Promise<LocalSmtp> {
  const { lambda } = opts;
  const { rule, domain } = inboundRule(lambda);
  // Loaded now: the account lookup needs this process's store settings (configureLocalEnv), set by the caller first.
  const { findInboundRecipient } = await import('#shared/email/addresses.ts');
  const s3 = new S3Client({
    region: lambda.region,
    endpoint: lambda.s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // A plain PUT with its length, which the local S3 front splits into parts above fauxqs's body limit.
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });

  /** Run the rule's actions for one mail, in their order, as SES does. */
  async function receive(raw: Buffer, session: SMTPServerSession): Promise<string> {
    const started = Date.now();
    const messageId = sesMessageId();
    const recipients = session.envelope.rcptTo.map((r) => r.address);
    const source = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
    const fields = headerFields(raw);
    const scanned: SESReceiptStatus = { status: rule.scanEnabled ? 'PASS' : 'DISABLED' };
    for (const action of rule.actions) {
      if (action.type === 'S3') {
        await s3.send(new PutObjectCommand({ Bucket: lambda.deployment.buckets.get(action.bucketId)!, Key: `${action.objectKeyPrefix}${messageId}`, Body: raw, ContentType: 'message/rfc822' }));
        continue;
      }
      const fn = lambda.fn(action.functionId);
      const event: SESEvent = {
        Records: [
          {
            eventSource: 'aws:ses',
            eventVersion: '1.0',
            ses: {
              mail: {
                timestamp: new Date(started).toISOString(),
                source,
                messageId,
                destination: recipients,
                headersTruncated: false,
                headers: fields,
                commonHeaders: commonHeaders(fields, source),
              },
              receipt: {
                timestamp: new Date(started).toISOString(),
                processingTimeMillis: Date.now() - started,
                recipients,
                spamVerdict: scanned,
                virusVerdict: scanned,
                spfVerdict: { status: 'PASS' },
                dkimVerdict: { status: 'PASS' },
                dmarcVerdict: { status: 'PASS' },
                action: { type: 'Lambda', functionArn: localFunctionArn(lambda.region, fn.name), invocationType: action.invocationType },
              },
            },
          },
        ],
      };
      // Deployed, an `Event` invocation is not waited for; here the reply waits, so a failure reaches the sender as a 4xx.
      await fn.invoke(event);
    }
    return messageId;
  }

  const server = new SMTPServer({
    name: domain,
    banner: `${domain} local Support Desk inbound (as SES receiving, account ${LOCAL_ACCOUNT})`,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: EMAIL_INBOUND.maxMessageBytes,
    rejectOversized: true,
    logger: false,
    // At stop, a session still open gets what the gateway's requests get (5 s) to finish its mail, then a 421.
    closeTimeout: 5_000,
    onRcptTo(address, _session, callback) {
      findInboundRecipient(address.address, domain).then(
        (found) => callback(found ? null : new SmtpReplyError(550, `5.1.1 <${address.address}>: no such mailbox here`)),
        (err: Error) => callback(new SmtpReplyError(451, `4.3.0 could not look up <${address.address}>: ${err.message}`)),
      );
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (err: Error) => callback(new SmtpReplyError(451, `4.3.0 ${err.message}`)));
      stream.on('end', () => {
        if (stream.sizeExceeded) return callback(new SmtpReplyError(552, `5.3.4 message exceeds ${EMAIL_INBOUND.maxMessageBytes} bytes`));
        receive(Buffer.concat(chunks), session).then(
          (messageId) => callback(null, `2.0.0 Ok: queued as ${messageId}`),
          (err: Error) => {
            warn('inbound mail not delivered: the sender will try again', { error: err.message });
            callback(new SmtpReplyError(451, '4.3.0 the mail could not be delivered now; try again later'));
          },
        );
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Like the gateway: every interface, IPv4 and IPv6, so `localhost` reaches it whichever family a client tries first.
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (opts.host) server.listen(opts.port, opts.host, listening);
    else server.listen(opts.port, listening);
  });
  // A client's connection error (a reset, a timeout) is that client's, not the server's end.
  server.on('error', (err: Error) => warn('SMTP connection error', { error: err.message }));
  return {
    port: (server.server.address() as AddressInfo).port,
    domain,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      s3.destroy();
    },
  };
}
