import * as z from '../shared/zod.ts';
import { inboundSettings } from '#shared/email/settings.ts';

/**
 * One deployment stage, typed and validated at synth: everything that differs
 * between stages, with no silent defaults for what must be chosen (account,
 * region, the email sender).
 */
export const StageConfigSchema = z.object({
  /** Short name, part of every resource name of the stage (stack `SupportDesk-<stage>`). */
  stage: z.string().check(z.regex(/^[a-z][a-z0-9-]{1,19}$/, 'lowercase letters, digits and dashes')),
  account: z.string().check(z.regex(/^\d{12}$/, 'a 12-digit AWS account id')),
  region: z.string().check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'an AWS region such as eu-west-1')),
  /** SES identity (address or domain) response and invitation emails are sent from; verify it in SES first. */
  emailFrom: z.string().check(z.regex(/^([^@\s]+@)?[a-z0-9.-]+\.[a-z]{2,}$/i, 'an email address or domain')),
  /**
   * The domain customers' mail comes in on (decisions §17): every account's inbound address is
   * `<account id>@<inboundDomain>`. SES receives it (a receipt rule set of the stage, activated by hand) once the
   * platform team points its MX at SES and the domain's identity is verified (docs/email.md). The same rule as the
   * functions' INBOUND_DOMAIN.
   */
  inboundDomain: inboundSettings.schema.shape.INBOUND_DOMAIN as z.ZodMiniString,
  /** Who is paged: an existing SNS topic (e.g. wired to PagerDuty/Opsgenie), and/or an email subscribed to the stage's own topic. */
  alarms: z
    .object({ topicArn: z.optional(z.string().check(z.startsWith('arn:aws'))), email: z.optional(z.email()) })
    .check(z.refine((a) => a.topicArn || a.email, 'name a topicArn or an email: alarms must reach someone')),
  /** Company-data provider (decisions §11); its API key lives in Secrets Manager, never in the template. */
  enrichment: z._default(
    z.discriminatedUnion('provider', [
      z.object({ provider: z.literal('none') }),
      z.object({ provider: z.literal('http'), url: z.url({ protocol: /^https$/ }), apiKeySecretName: z.string().check(z.minLength(1)) }),
    ]),
    { provider: 'none' },
  ),
  /**
   * Seconds API Gateway caches an authorizer answer per Authorization header
   * (default 300): one authorizer invocation and one DynamoDB read saved per
   * cached request. Revoking a key, suspending, deleting or re-roling a user and
   * changing a plan flush the stage's cache (shared/auth/authorizer-cache.ts), so
   * they still take effect on the next request. 0: no cache, no flush.
   */
  authorizerCacheTtlSeconds: z._default(z.number().check(z.int(), z.gte(0), z.lte(3600)), 300),
  /** Reserved concurrency, so a consumer backlog cannot take the API's share of the account's concurrency. Omit in small accounts. */
  reservedConcurrency: z.optional(z.object({ authorizer: z.number().check(z.int(), z.gte(1)), apiFunction: z.number().check(z.int(), z.gte(1)) })),
  /**
   * Uploads and attachments (decisions §14; docs/infrastructure.md): the browser origins that may PUT uploads (CORS),
   * how object access is logged (S3 server access logs, or CloudTrail data events of this bucket), how long those logs
   * are kept, and GuardDuty Malware Protection for S3 on the upload prefix (then only uploads tagged clean can be
   * attached; GuardDuty bills per GB scanned).
   */
  uploads: z.prefault(
    z.object({
      corsOrigins: z._default(z.array(z.url({ protocol: /^https?$/ }).check(z.regex(/^https?:\/\/[^/]+$/, 'an origin: scheme and host, no path'))).check(z.maxLength(20)), []),
      accessLogging: z._default(z.enum(['serverAccessLogs', 'cloudTrailDataEvents']), 'serverAccessLogs'),
      accessLogRetentionDays: z._default(z.number().check(z.int(), z.gte(1), z.lte(3650)), 365),
      malwareProtection: z._default(z.boolean(), false),
    }),
    {},
  ),
  /**
   * Who may subscribe to the bus from other AWS accounts: the accounts, and/or
   * every account of an AWS Organization, that may create rules on it for the
   * published events (and manage the rules they created). Nobody else's, and
   * never PutEvents. Omit for no cross-account subscribers.
   */
  eventSubscribers: z._default(
    z.object({
      accounts: z._default(z.array(z.string().check(z.regex(/^\d{12}$/, 'a 12-digit AWS account id'))), []),
      organizationId: z.optional(z.string().check(z.regex(/^o-[a-z0-9]{10,32}$/, 'an AWS Organization id such as o-a1b2c3d4e5'))),
    }),
    { accounts: [] },
  ),
  /** Days audits (ticket history and the account's audit log, decisions §15) are kept before DynamoDB's TTL removes them. */
  auditRetentionDays: z._default(z.number().check(z.int(), z.gte(1), z.lte(3650)), 365),
  /** Days the bus archive keeps the published events for replays (EventBridge archive retention). */
  eventArchiveRetentionDays: z._default(z.number().check(z.int(), z.gte(1), z.lte(3650)), 30),
  /**
   * How many of the keys-only view GSIs (gsi5..gsi8, the ticket views of decisions §13) the table declares. A new
   * stage takes all 4. CloudFormation adds one GSI per table update, so an existing table upgrades with 1, 2, 3, then 4
   * (one deploy each), then `admin reindex --all`; until an index exists, lists it would serve read as before.
   */
  viewIndexes: z._default(z.number().check(z.int(), z.gte(0), z.lte(4)), 4),
  functionMemoryMb: z._default(z.number().check(z.int(), z.gte(128), z.lte(10240)), 1024),
  logRetentionDays: z._default(z.union([z.literal(7), z.literal(14), z.literal(30), z.literal(90), z.literal(180), z.literal(365)]), 30),
});
export type StageConfig = z.output<typeof StageConfigSchema>;
export type StageConfigInput = z.input<typeof StageConfigSchema>;

/** Parse a stage's settings, failing the synth with every problem named. */
export function stageConfig(input: unknown): StageConfig {
  const parsed = StageConfigSchema.safeParse(input);
  if (!parsed.success) throw new Error(`Invalid stage configuration: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'stage'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export const stackNameOf = (stage: string) => `SupportDesk-${stage}`;
