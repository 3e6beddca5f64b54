import type { ChangeMessageVisibilityCommandInput, SendMessageBatchCommandInput, SendMessageBatchCommandOutput, SendMessageCommandInput } from '@aws-sdk/client-sqs';
import { sqsSettings } from './settings.ts';

/**
 * SQS for the functions: the calls they make, each loading the client
 * (shared/events/sqs-client.ts) at its first use. The client, its commands and
 * the SDK code only SQS needs are a chunk of their own, so a cold start does
 * not pay for them unless a call sends (issue 42: a consumer's visibility
 * change happens only on a failure, an API group's send only on some writes).
 */
let client: Promise<typeof import('./sqs-client.ts')> | undefined;
const loaded = () =>
  (client ??= import('./sqs-client.ts').catch((err: unknown) => {
    client = undefined;
    throw err;
  }));

/** SendMessage with the process's client. */
export async function sendMessage(input: SendMessageCommandInput): Promise<void> {
  const { sqs, SendMessageCommand } = await loaded();
  await sqs.send(new SendMessageCommand(input));
}

/** SendMessageBatch with the process's client: its answer says which entries failed. */
export async function sendMessageBatch(input: SendMessageBatchCommandInput): Promise<SendMessageBatchCommandOutput> {
  const { sqs, SendMessageBatchCommand } = await loaded();
  return sqs.send(new SendMessageBatchCommand(input));
}

/** ChangeMessageVisibility with the process's client (a consumer's backoff). */
export async function changeMessageVisibility(input: ChangeMessageVisibilityCommandInput): Promise<void> {
  const { sqs, ChangeMessageVisibilityCommand } = await loaded();
  await sqs.send(new ChangeMessageVisibilityCommand(input));
}

/** A queue's URL from its ARN (as Lambda's SQS records carry it), on the client's endpoint. */
export function queueUrlFromArn(arn: string): string {
  const [, , , region, account, name] = arn.split(':');
  const { SQS_ENDPOINT, AWS_ENDPOINT_URL_SQS } = sqsSettings();
  // AWS_ENDPOINT_URL_SQS is the SDK's own setting for a custom endpoint (the local stack gives it to every function);
  // a URL on another host would make the client send there instead.
  const endpoint = SQS_ENDPOINT ?? AWS_ENDPOINT_URL_SQS;
  return endpoint ? `${endpoint}/${account}/${name}` : `https://sqs.${region}.amazonaws.com/${account}/${name}`;
}
