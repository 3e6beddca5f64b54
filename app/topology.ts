import { INBOUND_OBJECT_PREFIX, QUARANTINE_OBJECT_PREFIX } from '#shared/email/ses-events.ts';

/**
 * The event pipeline in tables: which function consumes each queue and what
 * it needs (QUEUES), and which bus events go to which queue (RULES,
 * ./bus-rules.ts). The CDK app builds the
 * EventBridge rules, SQS queues (with their DLQs), event-source mappings, each
 * consumer's environment, grants and queue-age alarm from it; the local
 * pipeline (local/pipeline.ts) builds the same queues in fauxqs and routes
 * PutEvents entries by the same patterns, so the two cannot drift.
 */

export interface QueueDef {
  name: QueueName;
  /** The consumer function's entry file, relative to the project root (NodejsFunction entry). */
  consumer: string;
  /** Lambda event-source batch size; the local poller receives the same number at most. */
  batchSize: number;
  /** Seconds a received message stays hidden; at least 6x the consumer's timeout (AWS guidance). */
  visibilityTimeoutSeconds: number;
  /** Consumer function timeout, seconds. */
  functionTimeoutSeconds: number;
  /** Receives before SQS moves a message to the DLQ (`<name>-dlq`). */
  maxReceiveCount: number;
  /** Environment variable through which other functions find this queue's URL (only queues something sends to directly). */
  urlEnv?: string;
  /** Environment variable for the DLQ's URL, for consumers that dead-letter explicitly. */
  dlqUrlEnv?: string;
  /** Queues this consumer sends to directly: their URLs reach it through their `urlEnv`, and sending is granted. */
  sendsTo?: readonly QueueName[];
  /**
   * Most concurrent invocations the queue's event source may run (Lambda
   * maxConcurrency; default DEFAULT_MAX_CONCURRENCY): one busy queue cannot
   * take the account's whole Lambda concurrency from the API and the others.
   * The local pipeline runs as many pollers.
   */
  maxConcurrency?: number;
  /** The consumer sends email as the stage's sender: it is told EMAIL_TRANSPORT=ses and EMAIL_FROM, and may call ses:SendEmail on that identity only. */
  sendsEmail?: boolean;
  /** Stack output that carries the queue's URL, for tools outside the stack (scripts/stack-outputs.ts). */
  urlOutput?: string;
  /** A message older than this (seconds) pages: the queue is stuck. Default OLDEST_MESSAGE_ALARM_SECONDS. */
  oldestMessageAlarmSeconds?: number;
  /** The feature whose nested stack builds the queue, its consumer and its rules (StackPart); default the service's stack. */
  part?: StackPart;
  description: string;
}

/**
 * A feature deployed as a nested stack of the service's: its API function,
 * queues, consumers, rules and schedules, with their roles, log groups and
 * alarms (infra/parts.ts). CloudFormation holds 500 resources a stack; a
 * consumer or a scheduled job brings about ten, so a feature that adds several
 * lives in its own part, and the service's stack pays one resource for it.
 */
export type StackPart = 'views';

/**
 * Every queue is an SQS fair queue: each message carries its account as
 * `MessageGroupId`, so one account's backlog does not hold up another's. Our
 * senders set it; a bus rule sets BUS_MESSAGE_GROUP. fauxqs ignores the group
 * id, so the local pipeline serves each queue fairly itself (local/pipeline.ts).
 *
 * The MessageGroupId a bus rule gives what it delivers to its queue: the
 * event's account (an EventBridge dynamic path parameter, evaluated per event).
 * Without it every bus-fed queue was first in, first out across accounts, so a
 * quiet account's events waited behind a busy one's whole backlog (issue 21).
 */
export const BUS_MESSAGE_GROUP = '$.detail.accountId';

/** Event-source concurrency of a queue that does not set its own. */
export const DEFAULT_MAX_CONCURRENCY = 10;

/** The age of a queue's oldest message that pages, for a queue that does not set its own: 15 minutes. */
export const OLDEST_MESSAGE_ALARM_SECONDS = 15 * 60;

/**
 * A job on a timer: an EventBridge schedule rule invoking its function in AWS,
 * a timer in the local pipeline (and `runSchedule(name)` for tests).
 */
export interface ScheduleDef {
  name: string;
  /** The job's entry file, relative to the project root; it exports `handler`. */
  entry: string;
  rateMinutes: number;
  functionTimeoutSeconds: number;
  /** Queues the job sends work to (their URLs through `urlEnv`; sending is granted). */
  sendsTo?: readonly QueueName[];
  /** The feature whose nested stack builds the job and its schedule (StackPart); default the service's stack. */
  part?: StackPart;
  description: string;
}

export type QueueName =
  | 'webhook-fanout'
  | 'webhook-delivery'
  | 'email-sender'
  | 'enrichment'
  | 'automations'
  | 'automation-time-rules'
  | 'sla'
  | 'sla-recompute'
  | 'group-distribution'
  | 'attachment-cleanup'
  | 'reindex'
  | 'bulk-jobs'
  | 'view-counts'
  | 'view-recount';

/** 14 days: the SQS maximum, so a delivery retried over ~28 hours (decisions §7) and its DLQ copy outlive any outage. */
export const MESSAGE_RETENTION_SECONDS = 14 * 24 * 60 * 60;

export const dlqName = (queue: QueueName) => `${queue}-dlq`;

export const QUEUES: readonly QueueDef[] = [
  {
    name: 'webhook-fanout',
    consumer: 'functions/webhook-fanout/handler.ts',
    sendsTo: ['webhook-delivery'],
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description: 'Ticket events -> one delivery record and one delivery message per subscribed active webhook (idempotent by event id + webhook id)',
  },
  {
    name: 'webhook-delivery',
    consumer: 'functions/webhook-delivery/handler.ts',
    // Deliveries in a batch run concurrently, each bounded by the 10 s delivery timeout.
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    // Retries are scheduled by the consumer (ChangeMessageVisibility), and after the 8th attempt it dead-letters
    // explicitly; this redrive only catches a consumer that keeps crashing on one message.
    maxReceiveCount: 20,
    urlEnv: 'WEBHOOK_DELIVERY_QUEUE_URL',
    sendsTo: ['webhook-delivery'],
    // Deliveries mostly wait on receivers; per-host limits (shared/webhooks/target.ts) keep one tenant's slow hosts in check.
    maxConcurrency: 20,
    dlqUrlEnv: 'WEBHOOK_DELIVERY_DLQ_URL',
    // Deliveries wait on purpose between retries (up to 10 h, ~28 h in all): only a message older than the whole schedule is stuck.
    oldestMessageAlarmSeconds: 30 * 60 * 60,
    description: 'One message per (event, webhook) delivery; signed POST to the target with the retry schedule of decisions §7',
  },
  {
    name: 'email-sender',
    consumer: 'functions/email-sender/handler.ts',
    sendsEmail: true,
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description: "message.created -> response emails, user.invited -> invitations, webhook.disabled -> the account's admins, ticket.resolved -> the survey mail, through the email port",
  },
  {
    name: 'enrichment',
    consumer: 'functions/enrichment/handler.ts',
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description: 'organization.created -> company facts from the enrichment provider; organization.deleted -> unlink its remaining contacts',
  },
  {
    name: 'automations',
    consumer: 'functions/automations/consumer.ts',
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description: 'ticket.created / ticket.updated -> the first matching automation applies its actions (events caused by automations are skipped)',
  },
  {
    name: 'automation-time-rules',
    consumer: 'functions/automations/time-rules-consumer.ts',
    // One message holds up to 50 tickets; one per invocation keeps each run short.
    batchSize: 1,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'AUTOMATION_TIME_RULES_QUEUE_URL',
    description: 'Batches of open tickets from the hourly job -> time-based automations (hoursSince* conditions)',
  },
  {
    name: 'sla',
    consumer: 'functions/sla-state/handler.ts',
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description: "Ticket events and message.created -> each ticket's SLA state (facts, applied policy, due index, breaches)",
  },
  {
    name: 'sla-recompute',
    consumer: 'functions/sla-recompute/handler.ts',
    // One message is one page of 100 tickets; the consumer queues the next page itself.
    batchSize: 1,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'SLA_RECOMPUTE_QUEUE_URL',
    sendsTo: ['sla-recompute'],
    description: 'POST /sla-policies/recompute -> open tickets recomputed with the current policies, one page per message',
  },
  {
    name: 'group-distribution',
    consumer: 'functions/group-distribution/handler.ts',
    // Each message is a bounded run (at most 50 assignments, then a follow-up event).
    batchSize: 5,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    description: "group.capacity.changed -> assign the groups' oldest waiting tickets (backfill); group.deleted -> detach its tickets, drop its counters",
  },
  {
    name: 'attachment-cleanup',
    consumer: 'functions/attachment-cleanup/handler.ts',
    // Each message clears at most 2,000 messages of one ticket, then continues in a follow-up message on this queue.
    batchSize: 5,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'ATTACHMENT_CLEANUP_QUEUE_URL',
    sendsTo: ['attachment-cleanup'],
    description: "ticket.deleted -> the ticket's messages and attachment records, then their objects in S3 (idempotent)",
  },
  {
    name: 'reindex',
    consumer: 'functions/reindex/handler.ts',
    // One message is one step (a page of 100 records of one kind); the consumer queues the next step itself.
    batchSize: 1,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'REINDEX_QUEUE_URL',
    sendsTo: ['reindex'],
    // `admin reindex --background` queues an account's first step here.
    urlOutput: 'ReindexQueueUrl',
    description: 'admin reindex -> the search words and ticket views of records written before them, one page per message (idempotent, resumable)',
  },
  {
    name: 'bulk-jobs',
    consumer: 'functions/bulk-jobs/handler.ts',
    // One message is one step of a job (a chunk of 25 tickets, or one merge source); the consumer queues the next step itself.
    batchSize: 1,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'BULK_JOBS_QUEUE_URL',
    sendsTo: ['bulk-jobs'],
    description:
      "POST /v1/tickets/bulk_update|bulk_delete -> each ticket changed as its own PUT or DELETE, a chunk per message; POST /v1/tickets/{id}/merge -> each source's messages moved, then its close; results recorded in the job (resumable, nothing done twice)",
  },
  {
    name: 'view-counts',
    consumer: 'functions/view-counts/handler.ts',
    part: 'views',
    batchSize: 10,
    functionTimeoutSeconds: 30,
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    description:
      "ticket.created / updated / deleted -> the ticket judged against the account's views, before and after; their counts moved in one transaction, the event marked applied once (decisions §21)",
  },
  {
    name: 'view-recount',
    consumer: 'functions/view-counts/recount.ts',
    part: 'views',
    // One message is one page of 100 tickets; the consumer queues the next page itself.
    batchSize: 1,
    functionTimeoutSeconds: 60,
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    urlEnv: 'VIEW_RECOUNT_QUEUE_URL',
    sendsTo: ['view-recount'],
    description: "A new or edited view, and the scheduled pass -> every ticket of the account settled against its views, one page per message; then the views' counts are ready",
  },
];

/** Scheduled jobs besides the outbox sweeper (automation time rules, SLA breach checks). */
export const SCHEDULES: readonly ScheduleDef[] = [
  {
    name: 'automation-time-rules',
    entry: 'functions/automations/time-rules.ts',
    rateMinutes: 60,
    functionTimeoutSeconds: 300,
    sendsTo: ['automation-time-rules'],
    description: 'Hourly: open tickets of accounts with time-based automations, queued in batches for evaluation',
  },
  {
    name: 'sla-breach-check',
    entry: 'functions/sla-breach-check/handler.ts',
    rateMinutes: 1,
    functionTimeoutSeconds: 55,
    description: 'Overdue SLA metrics (sharded due index on gsi4) -> marked breached, sla.breached through the outbox',
  },
  {
    name: 'retention-sweep',
    entry: 'functions/retention-sweep/handler.ts',
    rateMinutes: 24 * 60,
    functionTimeoutSeconds: 600,
    description: "Daily: each account's tickets closed longer ago than its retention (decisions §23) deleted as a DELETE would, in batches, oldest first",
  },
  {
    name: 'view-time-pass',
    entry: 'functions/view-counts/pass.ts',
    part: 'views',
    rateMinutes: 15,
    functionTimeoutSeconds: 60,
    sendsTo: ['view-recount'],
    description: 'Every 15 minutes: accounts with time-based view conditions (hoursSince*) or a view count owed, counted again in the background',
  },
];

/** The outbox publisher: a DynamoDB Streams consumer of the table (INSERT of type=outbox), and its sweeper on a schedule. */
export const OUTBOX_PUBLISHER = {
  consumer: 'functions/outbox-publisher/handler.ts',
  sweeper: 'functions/outbox-publisher/sweeper.ts',
  /** Stream batch size (records); PutEvents takes 10 entries per call. */
  batchSize: 100,
  /**
   * The publisher never reports a record back (that would hold the shard);
   * Lambda retries a batch only when the function itself fails, for at most
   * this long: older records are skipped and the sweeper publishes them from
   * the outbox, which still holds them.
   */
  maxRecordAgeSeconds: 15 * 60,
  retryAttempts: 100,
  /**
   * Concurrent batches per stream shard (event order across tenants does not matter; consumers deduplicate).
   * The maximum, 10: a batch mostly waits on PutEvents and the outbox deletes, and under a burst 4 batches in
   * flight let the stream fall seconds behind the writes (issue 21, docs/performance.md).
   */
  parallelizationFactor: 10,
  /** Lambda event filter: only new outbox items wake the publisher. */
  filterPattern: { eventName: ['INSERT'], dynamodb: { NewImage: { type: { S: ['outbox'] } } } },
  /** The sweeper runs every minute and republishes outbox items older than this. */
  sweepAgeSeconds: 60,
  sweepScheduleMinutes: 1,
} as const;

/**
 * The email channel's receiving side (decisions §17): SES's receipt rule for
 * the stage's inbound domain stores the raw message under `objectPrefix` in
 * the uploads bucket, then invokes this function asynchronously; the same
 * function takes the configuration set's bounce and complaint notifications
 * from SNS. Locally the SMTP server (local/smtp.ts) does what the rule does.
 */
export const EMAIL_INBOUND = {
  entry: 'functions/email-inbound/handler.ts',
  description: "Mail received by SES (the receipt rule's Lambda action) -> tickets and replies; SES bounces and complaints (SNS) -> undeliverable contacts",
  /** A mail of SES's largest size (40 MB) with 25 MiB attachments is parsed and copied within this. */
  functionTimeoutSeconds: 120,
  /** Where the rule's S3 action stores a received mail (then SES's message id). */
  objectPrefix: INBOUND_OBJECT_PREFIX,
  /** Raw mail is kept this long after its ticket is made: time to re-run a failed invocation or look into a complaint. */
  inboundRetentionDays: 30,
  /** What the function refuses (spam, virus) is kept for review this long. */
  quarantinePrefix: QUARANTINE_OBJECT_PREFIX,
  quarantineRetentionDays: 90,
  /** SES accepts messages of up to 40 MB (headers included); the local SMTP server refuses larger ones as SES does. */
  maxMessageBytes: 40 * 1024 * 1024,
} as const;
