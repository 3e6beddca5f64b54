import { ChangeMessageVisibilityCommand, DeleteMessageCommand, GetQueueUrlCommand, ReceiveMessageCommand, SendMessageCommand, type Message } from '@aws-sdk/client-sqs';
import { sqs } from '#shared/events/sqs-client.ts';
import { dlqName, QUEUES, type QueueName } from './topology.ts';

/** A message parked in a queue's dead-letter queue, as operators see it. */
export interface DeadLetter {
  queue: QueueName;
  messageId: string;
  /** The body, parsed when it is JSON (an EventBridge envelope or a delivery pointer). */
  body: unknown;
  receiveCount: number;
  sentAt: string | null;
}

const urlOf = async (name: string) => (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl!;

const parse = (body: string | undefined): unknown => {
  try {
    return JSON.parse(body ?? '');
  } catch {
    return body ?? null;
  }
};

const toDeadLetter = (queue: QueueName, m: Message): DeadLetter => ({
  queue,
  messageId: m.MessageId!,
  body: parse(m.Body),
  receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0),
  sentAt: m.Attributes?.SentTimestamp ? new Date(Number(m.Attributes.SentTimestamp)).toISOString() : null,
});

/**
 * Peek at up to `max` messages of each topology queue's DLQ without taking
 * them: received with a zero visibility timeout, so they stay where they are.
 * SQS samples servers, so one look may not show every message of a large DLQ.
 */
export async function listDeadLetters(queues: readonly QueueName[] = QUEUES.map((q) => q.name), max = 100): Promise<DeadLetter[]> {
  const out: DeadLetter[] = [];
  for (const queue of queues) {
    const url = await urlOf(dlqName(queue));
    const seen = new Map<string, DeadLetter>();
    for (let round = 0; round < 10 && seen.size < max; round++) {
      const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, WaitTimeSeconds: 0, MessageSystemAttributeNames: ['All'] }));
      const fresh = (res.Messages ?? []).filter((m) => !seen.has(m.MessageId!));
      if (!fresh.length) break;
      for (const m of fresh) seen.set(m.MessageId!, toDeadLetter(queue, m));
    }
    out.push(...[...seen.values()].slice(0, max));
  }
  return out;
}

/**
 * Send one dead-lettered message back to its source queue (after the cause is
 * fixed), then remove it from the DLQ. Sent before deleted: a crash in
 * between leaves a duplicate, never a loss (consumers are idempotent).
 */
export async function redriveDeadLetter(queue: QueueName, messageId: string): Promise<'redriven' | 'not-found'> {
  const dlqUrl = await urlOf(dlqName(queue));
  const inTheWay: Message[] = [];
  try {
    for (let round = 0; round < 20; round++) {
      const res = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, MaxNumberOfMessages: 10, VisibilityTimeout: 30, WaitTimeSeconds: 0 }));
      const messages = res.Messages ?? [];
      if (!messages.length) return 'not-found';
      const hit = messages.find((m) => m.MessageId === messageId);
      inTheWay.push(...messages.filter((m) => m !== hit));
      if (hit) {
        await sqs.send(new SendMessageCommand({ QueueUrl: await urlOf(queue), MessageBody: hit.Body! }));
        await sqs.send(new DeleteMessageCommand({ QueueUrl: dlqUrl, ReceiptHandle: hit.ReceiptHandle! }));
        return 'redriven';
      }
    }
    return 'not-found';
  } finally {
    // The others were only looked at: visible again at once, untouched.
    await Promise.all(inTheWay.map((m) => sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: dlqUrl, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 })).catch(() => undefined)));
  }
}
