import { CreateQueueCommand, GetQueueUrlCommand, SetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { Deployment } from './deployment.ts';

/**
 * Create the template's queues in the SQS emulator with their attributes and
 * redrive policies (dead-letter queues first). CreateQueue is idempotent for
 * a queue that exists with the same attributes, so a restart on persisted
 * queues keeps their messages; one kept from a template that said otherwise
 * takes the new attributes and keeps its messages, as a stack update would.
 */
export async function createLocalQueues(sqs: SQSClient, d: Deployment, region: string, account: string): Promise<void> {
  const arn = (name: string) => `arn:aws:sqs:${region}:${account}:${name}`;
  const ordered = [...d.queues.values()].sort((a, b) => Number(Boolean(a.redrive)) - Number(Boolean(b.redrive)));
  for (const q of ordered) {
    const Attributes: Record<string, string> = {};
    if (q.visibilityTimeoutSeconds !== undefined) Attributes.VisibilityTimeout = String(q.visibilityTimeoutSeconds);
    if (q.retentionSeconds !== undefined) Attributes.MessageRetentionPeriod = String(q.retentionSeconds);
    if (q.redrive) Attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: arn(d.queues.get(q.redrive.deadLetterQueue)!.name), maxReceiveCount: q.redrive.maxReceiveCount });
    try {
      await sqs.send(new CreateQueueCommand({ QueueName: q.name, Attributes }));
    } catch (err) {
      if (!/QueueNameExists$/.test((err as Error).name)) throw err;
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: q.name }));
      await sqs.send(new SetQueueAttributesCommand({ QueueUrl, Attributes }));
    }
  }
}
