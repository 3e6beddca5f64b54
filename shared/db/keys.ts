import { contactEntities } from './entities/contacts.ts';
import { counterEntities } from './entities/counters.ts';
import { organizationEntities } from './entities/organizations.ts';
import { ticketEntities } from './entities/tickets.ts';

/**
 * The index of the table's entities: every entity's key templates and the
 * index slots it occupies, declared once in `entities/<module>.ts` (see
 * entity.ts). docs/data-model.md is generated from this catalog
 * (`npm run data-model`), and a test keeps the two equal.
 */
export const ENTITIES = {
  ...counterEntities,
  ...contactEntities,
  ...organizationEntities,
  ...ticketEntities,
};

/**
 * Every key string of the table is built here. Account-scoped items live under
 * `A#<accountId>`, so a request can only ever address its own tenant's items.
 * The two global lookups (API key hash, demo marker) carry no tenant data.
 */
const acct = (accountId: string) => `A#${accountId}`;

/**
 * Sort key for case-insensitive text order with the id as tie-breaker. The
 * separator sorts below every character a name can hold (names refuse control
 * characters), so "ann" sorts before "ann lee".
 */
export const textSortKey = (text: string, id: string) => `${text.toLowerCase()}\u0001${id}`;

export const keys = {
  account: (accountId: string) => ({ pk: acct(accountId), sk: 'ACCOUNT' }),

  user: (accountId: string, userId: string) => ({ pk: acct(accountId), sk: `USER#${userId}` }),
  userPrefix: 'USER#',
  /** Guard item that makes an email unique per account, case-insensitively. */
  userEmail: (accountId: string, email: string) => ({ pk: acct(accountId), sk: `USEREMAIL#${email.toLowerCase()}` }),
  /** Guard item naming the account's single owner. */
  owner: (accountId: string) => ({ pk: acct(accountId), sk: 'OWNER' }),
  /** GSI partitions for user lists sorted by name (gsi1) and email (gsi2). */
  usersByName: (accountId: string) => `${acct(accountId)}#USERS`,
  accountPk: acct,

  /** Global lookup by SHA-256 of the key: the only way to resolve a presented API key. */
  apiKeyHash: (hash: string) => ({ pk: `APIKEY#${hash}`, sk: 'APIKEY' }),
  /** The key's record under its account, found by id for revocation. */
  apiKey: (accountId: string, keyId: string) => ({ pk: acct(accountId), sk: `APIKEYID#${keyId}` }),
  apiKeyPrefix: 'APIKEYID#',

  /** Item counts of a page-number list (`n`), moved in the same transactions as its creates and deletes: the list's unfiltered total. */
  listCounter: (accountId: string, list: 'CONTACTS' | 'ORGS' | `TMSG#${string}`) => ({ pk: acct(accountId), sk: `COUNT#${list}` }),

  rateWindow: (accountId: string, windowStart: number) => ({ pk: acct(accountId), sk: `RL#${windowStart}` }),

  /** Custom ticket fields, their fieldKey guard, options and option-value guards. */
  ticketField: (accountId: string, fieldId: string) => ({ pk: acct(accountId), sk: `TFIELD#${fieldId}` }),
  ticketFieldPrefix: 'TFIELD#',
  ticketFieldKey: (accountId: string, fieldKey: string) => ({ pk: acct(accountId), sk: `TFIELDKEY#${fieldKey.toLowerCase()}` }),
  ticketFieldsIndex: (accountId: string) => `${acct(accountId)}#TFIELDS`,
  fieldPositionCounter: (accountId: string) => ({ pk: acct(accountId), sk: 'COUNTER#TFIELDPOS' }),
  option: (accountId: string, fieldId: string, optionId: string) => ({ pk: acct(accountId), sk: `TFOPT#${fieldId}#${optionId}` }),
  optionPrefix: (fieldId: string) => `TFOPT#${fieldId}#`,
  optionValue: (accountId: string, fieldId: string, value: string) => ({ pk: acct(accountId), sk: `TFOPTVAL#${fieldId}#${value}` }),

  /** Tickets; gsi1 (updated), gsi2 (status), gsi3 (priority) share one partition per account. */
  ticket: (accountId: string, ticketId: string) => ({ pk: acct(accountId), sk: `TICKET#${ticketId}` }),
  ticketPrefix: 'TICKET#',
  ticketsIndex: (accountId: string) => `${acct(accountId)}#TICKETS`,

  /** Messages are immutable, so each is stored twice in one transaction: by id (get) and under its ticket (list). */
  message: (accountId: string, messageId: string) => ({ pk: acct(accountId), sk: `MESSAGE#${messageId}` }),
  ticketMessage: (accountId: string, ticketId: string, messageId: string) => ({ pk: acct(accountId), sk: `TMSG#${ticketId}#${messageId}` }),
  ticketMessagePrefix: (ticketId: string) => `TMSG#${ticketId}#`,

  /**
   * An upload (decisions §14): pending until a message attaches it (the same item then describes the attachment, whose
   * id shares the upload's suffix), so consuming the token is one conditional write in the message's transaction.
   */
  upload: (accountId: string, uploadId: string) => ({ pk: acct(accountId), sk: `UPLOAD#${uploadId}` }),

  /** Marks a message's email as handed to the email port, so a redelivered event does not send it twice. */
  emailSent: (accountId: string, messageId: string) => ({ pk: acct(accountId), sk: `EMAILSENT#${messageId}` }),

  /** Transactional outbox: one item per ticket event until the publisher has handed it to EventBridge. */
  outbox: (accountId: string, eventId: string) => ({ pk: acct(accountId), sk: `OUTBOX#${eventId}` }),
  /**
   * Partitions of the outbox index (OUTBOX_INDEX): pending items are spread over
   * OUTBOX_SHARDS partitions by event id, so every tenant's writes do not land
   * on one hot index key; the sweeper queries each shard.
   */
  outboxPendingShard: (shard: number) => `OUTBOX_PENDING#${shard}`,
  /** Outbox items the bus refused for good (decisions §7 "parked"): kept, listed for operators, republishable. */
  outboxParked: 'OUTBOX_PARKED',
  /** Sort key in the outbox index: time order, the event id as tie-breaker. */
  outboxIndexSort: (at: string, eventId: string) => `${at}#${eventId}`,

  /** Webhooks of an account (few per account: listed with one Query on the prefix). */
  webhook: (accountId: string, webhookId: string) => ({ pk: acct(accountId), sk: `WEBHOOK#${webhookId}` }),
  webhookPrefix: 'WEBHOOK#',
  /** How many webhooks the account has, kept in the same transaction as each create and delete (decisions §7: at most 100). */
  webhookCount: (accountId: string) => ({ pk: acct(accountId), sk: 'COUNTER#WEBHOOKS' }),
  /** One delivery of one event to one webhook: state, attempt counters and the exact body every attempt sends. */
  webhookDelivery: (accountId: string, webhookId: string, deliveryId: string) => ({ pk: acct(accountId), sk: `WHDLV#${webhookId}#${deliveryId}` }),
  /** The delivery log: one item per attempt, time-ordered ids, so "newest first" is a reverse Query on the prefix. */
  webhookAttempt: (accountId: string, webhookId: string, attemptId: string) => ({ pk: acct(accountId), sk: `WHATT#${webhookId}#${attemptId}` }),
  webhookAttemptPrefix: (webhookId: string) => `WHATT#${webhookId}#`,

  /** An Idempotency-Key of an account (decisions §3), by SHA-256 of the key: its lock, then the first answer for 24 h. */
  idempotencyKey: (accountId: string, keyHash: string) => ({ pk: acct(accountId), sk: `IDEMP#${keyHash}` }),

  /**
   * Automations: one set item (`AUTOMATION`: evaluation order, version, count of active time rules)
   * and one item per automation (`AUTOMATION#<id>`); one Query on the prefix reads both.
   */
  automationSet: (accountId: string) => ({ pk: acct(accountId), sk: 'AUTOMATION' }),
  automation: (accountId: string, automationId: string) => ({ pk: acct(accountId), sk: `AUTOMATION#${automationId}` }),
  automationPrefix: 'AUTOMATION',
  /** gsi4 partition listing the set items of accounts with active time-based automations (the hourly job's work list). */
  automationTimeAccounts: 'AUTOMATION_TIME_ACCOUNTS',
  /** Marks that an automation already acted on a ticket event, so a redelivered event is not applied twice. */
  automationRun: (accountId: string, eventId: string) => ({ pk: acct(accountId), sk: `AUTORUN#${eventId}` }),
  /** SLA policies of an account (at most 50: listed with one Query on the prefix) and the set's head (count, next position, version). */
  slaPolicy: (accountId: string, policyId: string) => ({ pk: acct(accountId), sk: `SLAPOLICY#${policyId}` }),
  slaPolicyPrefix: 'SLAPOLICY#',
  slaPolicySet: (accountId: string) => ({ pk: acct(accountId), sk: 'SLAPOLICYSET' }),
  /** The account's business-hours schedule (absent: the default). */
  slaSchedule: (accountId: string) => ({ pk: acct(accountId), sk: 'SLASCHEDULE' }),
  /** One ticket's SLA state (facts, applied policy, reported breaches). */
  slaState: (accountId: string, ticketId: string) => ({ pk: acct(accountId), sk: `SLA#${ticketId}` }),
  /**
   * gsi4 partitions of running SLA deadlines, write-sharded so the per-minute
   * breach check reads many small partitions instead of one hot one. The check
   * spans accounts, so the account id leads the sort key after the due time.
   */
  slaDue: (shard: number) => `SLADUE#${shard}`,
  slaDueSort: (dueAt: string, accountId: string, ticketId: string) => `${dueAt}#${accountId}#${ticketId}`,
  /** Groups: config and the member map in one item (members change atomically, bulk included); the guard names the one default group. */
  group: (accountId: string, groupId: string) => ({ pk: acct(accountId), sk: `GROUP#${groupId}` }),
  groupPrefix: 'GROUP#',
  defaultGroup: (accountId: string) => ({ pk: acct(accountId), sk: 'DEFAULTGROUP' }),
  /** Open tickets of an agent in one group (caps per group) and when the group last handed them one (round robin). */
  groupLoad: (accountId: string, groupId: string, userId: string) => ({ pk: acct(accountId), sk: `GLOAD#${groupId}#${userId}` }),
  groupLoadPrefix: (groupId: string) => `GLOAD#${groupId}#`,
  /** Open tickets assigned to an agent, across every group and none (least busy, global cap). */
  agentLoad: (accountId: string, userId: string) => ({ pk: acct(accountId), sk: `AGENTLOAD#${userId}` }),
  /** Every ticket of a group (so deleting the group can detach them all) and, oldest first, those waiting for an agent (backfill). */
  groupTicket: (accountId: string, groupId: string, ticketId: string) => ({ pk: acct(accountId), sk: `GTICKET#${groupId}#${ticketId}` }),
  groupTicketPrefix: (groupId: string) => `GTICKET#${groupId}#`,
  groupWaiting: (accountId: string, groupId: string, ticketId: string) => ({ pk: acct(accountId), sk: `GWAIT#${groupId}#${ticketId}` }),
  groupWaitingPrefix: (groupId: string) => `GWAIT#${groupId}#`,

  /** Local-stack marker: which account `npm start` provisioned as its demo. */
  demoMarker: () => ({ pk: 'SYSTEM', sk: 'DEMO_ACCOUNT' }),
};
