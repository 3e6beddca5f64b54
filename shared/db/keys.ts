import { contactEntities } from './entities/contacts.ts';
import { counterEntities } from './entities/counters.ts';
import { organizationEntities } from './entities/organizations.ts';
import { searchEntities } from './entities/search.ts';
import { ticketEntities } from './entities/tickets.ts';
import { groupEntities } from './entities/groups.ts';
import { webhookEntities } from './entities/webhooks.ts';
import { messageEntities } from './entities/messages.ts';
import { attachmentEntities } from './entities/attachments.ts';
import { emailEntities } from './entities/email.ts';
import { eventEntities } from './entities/events.ts';
import { ticketFieldEntities } from './entities/ticket-fields.ts';
import { automationEntities } from './entities/automations.ts';
import { slaEntities } from './entities/sla.ts';
import { userEntities } from './entities/users.ts';
import { accountEntities } from './entities/accounts.ts';
import { idempotencyEntities } from './entities/idempotency.ts';
import { historyEntities } from './entities/history.ts';
import { jobEntities } from './entities/jobs.ts';
import { satisfactionEntities } from './entities/satisfaction.ts';
import { privacyEntities } from './entities/privacy.ts';
import { viewEntities } from './entities/views.ts';
import { macroEntities } from './entities/macros.ts';

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
  ...groupEntities,
  ...webhookEntities,
  ...messageEntities,
  ...attachmentEntities,
  ...emailEntities,
  ...eventEntities,
  ...searchEntities,
  ...ticketFieldEntities,
  ...automationEntities,
  ...slaEntities,
  ...userEntities,
  ...accountEntities,
  ...idempotencyEntities,
  ...historyEntities,
  ...jobEntities,
  ...satisfactionEntities,
  ...privacyEntities,
  ...viewEntities,
  ...macroEntities,
};

/**
 * The few keys built outside an entity's declaration: the rate-limit window of
 * the counters table, and the bench's bare calls (ticket, list prefix), which
 * must build the same keys as the tickets entity without going through it.
 * Every other key is built from its declaration (entity.ts). Account-scoped
 * items live under `A#<accountId>`, so a request can only ever address its own
 * tenant's items.
 */
const acct = (accountId: string) => `A#${accountId}`;

/**
 * Sort key for case-insensitive text order with the id as tie-breaker. The
 * separator sorts below every character a name can hold (names refuse control
 * characters), so "ann" sorts before "ann lee".
 */
export const textSortKey = (text: string, id: string) => `${text.toLowerCase()}\u0001${id}`;

export const keys = {
  user: (accountId: string, userId: string) => ({ pk: acct(accountId), sk: `USER#${userId}` }),
  accountPk: acct,

  /** Item counts of a page-number list (`n`), moved in the same transactions as its creates and deletes: the list's unfiltered total. */
  listCounter: (accountId: string, list: 'CONTACTS' | 'ORGS' | `TMSG#${string}`) => ({ pk: acct(accountId), sk: `COUNT#${list}` }),

  rateWindow: (accountId: string, windowStart: number) => ({ pk: acct(accountId), sk: `RL#${windowStart}` }),

  /** Tickets; gsi1 (updated), gsi2 (status), gsi3 (priority) share one partition per account. */
  ticket: (accountId: string, ticketId: string) => ({ pk: acct(accountId), sk: `TICKET#${ticketId}` }),
  ticketPrefix: 'TICKET#',
  ticketsIndex: (accountId: string) => `${acct(accountId)}#TICKETS`,
};
