import * as z from 'zod';

/**
 * Runtime configuration, read once per cold start through a schema. A deployed
 * function gets every value from the CDK app; the local stack sets them before
 * it imports any handler. Nothing falls back silently.
 */
const EnvSchema = z
  .object({
    TABLE_NAME: z.string().min(1),
    AWS_REGION: z.string().min(1),
    /** Only the local stack sets it (DynamoDB Local). */
    DYNAMODB_ENDPOINT: z.url().optional(),
    /** Local stack: the HS256 secret itself. */
    SESSION_SECRET: z.string().min(32).optional(),
    /** Local stack and tests: the key before the last rotation, still accepted when verifying. */
    SESSION_SECRET_PREVIOUS: z.string().min(32).optional(),
    /** Deployed stack: the Secrets Manager secret that holds it. */
    SESSION_SECRET_ARN: z.string().min(1).optional(),
  })
  .refine((e) => e.SESSION_SECRET || e.SESSION_SECRET_ARN, {
    message: 'SESSION_SECRET or SESSION_SECRET_ARN must be set',
  });

export type Env = z.infer<typeof EnvSchema>;

let cached: Env | undefined;

/** The validated environment; throws at first use when a required value is missing. */
export function env(): Env {
  if (!cached) {
    const parsed = EnvSchema.safeParse(process.env);
    if (!parsed.success) {
      throw new Error(`Invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'env'}: ${i.message}`).join('; ')}`);
    }
    cached = parsed.data;
  }
  return cached;
}
