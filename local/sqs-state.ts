/**
 * The SQS emulator's state across restarts of the local stack (issue 17).
 * With a data directory, fauxqs keeps queues and messages in SQLite there,
 * written through on every change, so a message it acknowledged survives a
 * SIGKILL. Two things remain for the stack to do on a restart: keep the port
 * (queue URLs carry it) and hand back what the killed run was holding.
 */
import { ChangeMessageVisibilityBatchCommand, ListQueuesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { FauxqsServer } from 'fauxqs';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const portFile = (dataDir: string) => join(dataDir, 'port');

/**
 * A released message is visible again after this long. Not 0: fauxqs 2.4.1 with a data directory fails a
 * change of visibility to 0 (a NOT NULL column set to null) after taking the message out of its in-flight
 * set, so the message disappears until the next restart.
 */
export const RELEASE_SECONDS = 1;

/** Whether a TCP port can be listened on right now (on every interface, as fauxqs listens). */
const isFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '0.0.0.0', () => s.close(() => resolve(true)));
  });

/**
 * The port the emulator had last time in this data directory, when it is free
 * (0 otherwise: any free port). The persisted queues keep the URLs they were
 * created with, port included, and GetQueueUrl answers with them.
 */
export async function previousPort(dataDir: string): Promise<number> {
  if (!existsSync(portFile(dataDir))) return 0;
  const port = Number(readFileSync(portFile(dataDir), 'utf8').trim());
  return Number.isInteger(port) && port > 0 && port < 65536 && (await isFree(port)) ? port : 0;
}

export function rememberPort(dataDir: string, port: number): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(portFile(dataDir), `${port}\n`);
}

/**
 * Make visible again, at once, every message a killed run of the stack was
 * holding (received by one of its pollers, hidden for the queue's visibility
 * timeout: 3 to 6 minutes). Only this stack consumes these queues, so when it
 * starts nothing is working on them any more: SQS would hand them out again
 * after the timeout, the restarted stack does it now (in RELEASE_SECONDS). A
 * message hidden for longer than its queue's visibility timeout was hidden by
 * a consumer scheduling a later retry (a webhook's next attempt in minutes or
 * hours), not by a receive, and keeps its time; a shorter retry delay is cut
 * short by a restart. Returns how many were released.
 */
export async function releaseHeldMessages(server: FauxqsServer, sqs: SQSClient): Promise<number> {
  const now = Date.now();
  let released = 0;
  const { QueueUrls = [] } = await sqs.send(new ListQueuesCommand({ MaxResults: 1000 }));
  for (const url of QueueUrls) {
    const queue = server.inspectQueue(url.slice(url.lastIndexOf('/') + 1));
    if (!queue) continue;
    const timeoutMs = Number(queue.attributes.VisibilityTimeout ?? 30) * 1000;
    const held = queue.messages.inflight.filter((m) => m.visibilityDeadline - now <= timeoutMs);
    for (let i = 0; i < held.length; i += 10) {
      const chunk = held.slice(i, i + 10);
      const out = await sqs.send(
        new ChangeMessageVisibilityBatchCommand({ QueueUrl: url, Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.receiptHandle, VisibilityTimeout: RELEASE_SECONDS })) }),
      );
      // One that could not be released (deleted meanwhile, or expired) comes back after its timeout anyway.
      released += out.Successful?.length ?? 0;
    }
  }
  return released;
}
