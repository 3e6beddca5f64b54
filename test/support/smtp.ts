import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createTransport, type Transporter } from 'nodemailer';
import { afterAll, beforeAll } from 'vitest';
import { EMAIL_INBOUND } from '#app/topology.ts';
import type { SesNotification } from '#shared/email/ses-events.ts';
import { LOCAL_ACCOUNT } from '../../local/lambda/index.ts';
import type { LocalFunction } from '../../local/lambda/runtime.ts';
import type { LocalSmtp } from '../../local/smtp.ts';
import { LOCAL_REGION } from '../../local/stack.ts';
import { localLambda } from './lambda.ts';

export interface SmtpHarness {
  /** The port of this file's SMTP server (`SMTP_PORT` of `npm start`). */
  port(): number;
  /** The inbound domain the receipt rule takes mail for (`inbound.localhost`). */
  domain(): string;
  /** A Nodemailer transport to this file's server: plain SMTP, no AUTH, no STARTTLS, as the local server speaks it. */
  transport(): Transporter;
  /** The inbound function as this file runs it (spy on `invoke`, read `invocations`). */
  inbound(): Promise<LocalFunction>;
  /** Invoke the inbound function's bundle with any event (an SNS record of a bounce, an SES receipt record made by hand). */
  invokeInbound(event: unknown): Promise<unknown>;
  /** The SNS event that the configuration set's topic delivers to the inbound function for one SES notification. */
  snsEvent(notification: SesNotification | Record<string, unknown>): Promise<unknown>;
  /** The keys stored under the receipt rule's prefix (`inbound/…`) in the bucket, and one object's bytes. */
  inboundKeys(): Promise<string[]>;
  readObject(key: string): Promise<Buffer>;
}

/**
 * The local SMTP server for this test file (local/smtp.ts, on a free port), in
 * front of this file's functions (test/support/lambda.ts) and bucket, as
 * `npm start` runs it: mail sent to it goes through the receipt rule of the
 * template to the inbound function. Started before the file's tests, stopped
 * after them (before the functions).
 */
export function useSmtp(): SmtpHarness {
  const lambda = localLambda();
  let smtp: LocalSmtp | undefined;
  let transporter: Transporter | undefined;
  let s3: S3Client | undefined;
  beforeAll(async () => {
    const { startLocalSmtp } = await import('../../local/smtp.ts');
    const running = await lambda;
    smtp = await startLocalSmtp({ port: 0, lambda: running });
    s3 = new S3Client({ region: LOCAL_REGION, endpoint: running.s3Endpoint, forcePathStyle: true, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  });
  afterAll(async () => {
    transporter?.close();
    s3?.destroy();
    await smtp?.stop();
  });
  const rule = async () => {
    const d = (await lambda).deployment;
    const s3Action = d.receiptRules[0].actions.find((a) => a.type === 'S3')!;
    return { bucket: d.buckets.get(s3Action.bucketId)!, prefix: s3Action.objectKeyPrefix };
  };
  const inbound = async () => (await lambda).byEntry(EMAIL_INBOUND.entry);
  return {
    port: () => smtp!.port,
    domain: () => smtp!.domain,
    transport() {
      transporter ??= createTransport({ host: '127.0.0.1', port: smtp!.port, secure: false, ignoreTLS: true });
      return transporter;
    },
    inbound,
    invokeInbound: async (event) => (await inbound()).invoke(event),
    async snsEvent(notification) {
      const running = await lambda;
      const fn = await inbound();
      const subscription = running.deployment.topicSubscriptions.find((s) => s.functionId === fn.def.logicalId);
      if (!subscription) throw new Error('The template subscribes the inbound function to no topic');
      const topicArn = `arn:aws:sns:${running.region}:${LOCAL_ACCOUNT}:${subscription.topicName}`;
      const id = randomUUID();
      return {
        Records: [
          {
            EventSource: 'aws:sns',
            EventVersion: '1.0',
            EventSubscriptionArn: `${topicArn}:${randomUUID()}`,
            Sns: { Type: 'Notification', MessageId: id, TopicArn: topicArn, Subject: null, Message: JSON.stringify(notification), Timestamp: new Date().toISOString(), MessageAttributes: {} },
          },
        ],
      };
    },
    async inboundKeys() {
      const { bucket, prefix } = await rule();
      const listed = await s3!.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
      return (listed.Contents ?? []).map((o) => o.Key!);
    },
    async readObject(key) {
      const { bucket } = await rule();
      const got = await s3!.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
  };
}
