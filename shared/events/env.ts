import * as z from 'zod';

const flag = z
  .enum(['0', '1', 'true', 'false'])
  .optional()
  .transform((v) => v === '1' || v === 'true');

/**
 * Configuration of the event pipeline (publisher, sweeper, webhook consumers),
 * read once through a schema. Values a function needs are required where it
 * uses them (`required()`), so a deployed function missing one fails at cold
 * start instead of half-working. The relaxations (private targets, insecure
 * TLS, retry scale) default to the safe, deployed behaviour.
 */
const PipelineEnvSchema = z.object({
  /** EventBridge bus the publisher puts events on (AWS). The local stack sets `local`. */
  EVENT_BUS_NAME: z.string().min(1).optional(),
  /** Only the local stack sets it (fauxqs). */
  SQS_ENDPOINT: z.url().optional(),
  WEBHOOK_DELIVERY_QUEUE_URL: z.string().min(1).optional(),
  WEBHOOK_DELIVERY_DLQ_URL: z.string().min(1).optional(),
  /** The hourly automation job sends batches of open tickets here. */
  AUTOMATION_TIME_RULES_QUEUE_URL: z.string().min(1).optional(),
  /** Queue of SLA recompute batches (the SLA policies API and the recompute consumer send to it). */
  SLA_RECOMPUTE_QUEUE_URL: z.string().min(1).optional(),
  /** Local stack only: allow targets on loopback/private addresses (the SSRF guard is on otherwise). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flag,
  /** Local stack only: accept self-signed TLS certificates of targets. */
  WEBHOOK_ALLOW_INSECURE_TLS: flag,
  /** Multiplies every retry delay (tests use 0.001 so the schedule runs in milliseconds). */
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
  /** First retry delay of a consumer message that failed (doubling per receive, capped at 300 s); tests use 0. */
  CONSUMER_RETRY_BASE_SECONDS: z.coerce.number().min(0).max(300).default(2),
  /** Republish outbox items older than this (the stream normally publishes them within a second). */
  OUTBOX_SWEEP_AGE_SECONDS: z.coerce.number().int().min(0).default(60),
});

export type PipelineEnv = z.infer<typeof PipelineEnvSchema>;

let cached: PipelineEnv | undefined;

export function pipelineEnv(): PipelineEnv {
  if (!cached) {
    const parsed = PipelineEnvSchema.safeParse(process.env);
    if (!parsed.success) throw new Error(`Invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
    cached = parsed.data;
  }
  return cached;
}

/** A value this function cannot run without. */
export function required<K extends keyof PipelineEnv>(name: K): NonNullable<PipelineEnv[K]> {
  const v = pipelineEnv()[name];
  if (v === undefined || v === null || v === '') throw new Error(`Invalid environment: ${name} is required`);
  return v as NonNullable<PipelineEnv[K]>;
}
