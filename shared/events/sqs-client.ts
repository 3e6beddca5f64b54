import { SQSClient } from '@aws-sdk/client-sqs';
export { ChangeMessageVisibilityCommand, SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { injectFaults } from '../faults/inject.ts';
import { withoutSdkLogger } from '../sdk-client.ts';
import { sqsSettings } from './settings.ts';
import { escapeForTransport, sqsBodyProblem } from './transport.ts';

const { AWS_REGION, SQS_ENDPOINT } = sqsSettings();

/**
 * Per-attempt limits: a send or delete answers in milliseconds (no call of the
 * functions long-polls), so an attempt that hangs is cut and retried by the
 * SDK instead of holding the function until it times out.
 */
export const SQS_TIMEOUTS = { connectionTimeout: 3_000, requestTimeout: 5_000, throwOnRequestTimeout: true } as const;

/**
 * The one SQS client of a process (fauxqs locally), created when this module
 * loads: at the first send (shared/events/sqs.ts loads it on demand, in a
 * chunk of its own, so a cold start whose first request sends nothing does not
 * load the SQS client), or at once where it is imported (the admin CLI, tests).
 */
export const sqs = withoutSdkLogger(
  new SQSClient({
    region: AWS_REGION,
    requestHandler: { ...SQS_TIMEOUTS },
    ...(SQS_ENDPOINT ? { endpoint: SQS_ENDPOINT, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  }),
);
injectFaults(sqs, 'sqs', { requestTimeoutMs: SQS_TIMEOUTS.requestTimeout });

/** A refusal SQS would answer (locally raised before the emulator sees the message, so local is as strict as AWS). */
export class SqsMessageRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidMessageContents';
  }
}

/**
 * Every body this client sends is a JSON document: characters a queue refuses
 * in a raw body (U+FFFE/U+FFFF in SQS, everything above U+FFFF in fauxqs) are
 * JSON-escaped here, in the adapter, so callers never see the difference and
 * consumers parse the same payload. Then SQS's own limits (256 KB, character
 * set) are checked, the same locally as in AWS.
 */
function safeBody(body: string): string {
  const escaped = /^\s*[[{]/.test(body) ? escapeForTransport(body) : body;
  const problem = sqsBodyProblem(escaped);
  if (problem) throw new SqsMessageRefusedError(problem);
  return escaped;
}

sqs.middlewareStack.add(
  (next) => async (args) => {
    const input = args.input as { MessageBody?: string; Entries?: { MessageBody?: string }[] };
    if (typeof input.MessageBody === 'string') input.MessageBody = safeBody(input.MessageBody);
    for (const e of input.Entries ?? []) if (typeof e.MessageBody === 'string') e.MessageBody = safeBody(e.MessageBody);
    return next(args);
  },
  { step: 'initialize', name: 'transportSafeBodies' },
);
