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
