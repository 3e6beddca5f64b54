import * as z from '../zod.ts';
import { defineSettings } from '../config/settings.ts';

/** The SQS client (shared/events/sqs-client.ts, loaded by shared/events/sqs.ts at the first call) and queue URLs from ARNs (sqs.ts). */
export const sqsSettings = defineSettings(
  'shared/events/sqs.ts',
  z.object({
    /** Set by Lambda itself; the local stack sets it too. */
    AWS_REGION: z.string().check(z.minLength(1)),
    /** Only the local stack sets it (fauxqs). */
    SQS_ENDPOINT: z.optional(z.url()),
    /** The SDK's own endpoint override, which the local stack gives every function; queue URLs built from ARNs follow it. */
    AWS_ENDPOINT_URL_SQS: z.optional(z.url()),
  }),
);

/** The event bus (shared/events/bus.ts), when a publisher first asks for it. */
export const busSettings = defineSettings(
  'shared/events/bus.ts',
  z.object({
    AWS_REGION: z.string().check(z.minLength(1)),
    /** EventBridge bus the publisher puts events on; the local stack sets `local`. */
    EVENT_BUS_NAME: z.string().check(z.minLength(1)),
  }),
);

/** SQS consumers' retry backoff (shared/events/consumer.ts), at the first failed message. */
export const consumerSettings = defineSettings(
  'shared/events/consumer.ts',
  z.object({
    /** First retry delay of a consumer message that failed (doubling per receive, capped at 300 s); tests use 0. */
    CONSUMER_RETRY_BASE_SECONDS: z._default(z.coerce.number().check(z.gte(0), z.lte(300)), 2),
  }),
);
