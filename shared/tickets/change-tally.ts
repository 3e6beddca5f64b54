import { bindEntity } from '../db/entity.ts';
import { ticketEntities } from '../db/entities/tickets.ts';
import type { Key } from '../db/query.ts';
import { shardOf } from '../db/shard.ts';
import type { TxWrite } from '../db/transact.ts';
import type { EventDetail } from '../events/detail.ts';
import { outboxWrites } from '../events/outbox.ts';
import { TICKET_EVENT_SOURCE } from './event-names.ts';

/**
 * The ticket change tally (decisions §21 `fresh`): in each of 8 shards by
 * ticket id, `made` counts the ticket.created/updated/deleted events recorded
 * (moved in the transaction that writes them to the outbox, so no change can
 * commit unseen) and `applied` those the view-count consumer has applied
 * (moved in its own transaction, once per event). A view count is fresh while
 * every shard has applied what was made. Sharded so that concurrent ticket
 * changes of one account rarely contend for one item; read by key, with the
 * counts, in one BatchGetItem.
 */
export const TICKET_CHANGE_SHARDS = 8;

/** The events the view counts follow (rule ticket-events-to-view-counts). */
export const COUNTED_TICKET_EVENTS = ['ticket.created', 'ticket.updated', 'ticket.deleted'] as const;

interface Tally {
  accountId: string;
  shard: string;
  made: number;
  applied: number;
}

const tallies = bindEntity<Tally>(ticketEntities.ticketChangeTally, { fields: ['accountId', 'shard', 'made', 'applied'] });

/** An item made by an update carries its type too (readers tell the tally from the counts beside it by it). */
const TYPED = { type: ticketEntities.ticketChangeTally.type };

const shardOfTicket = (ticketId: string) => String(shardOf(ticketId, TICKET_CHANGE_SHARDS));
const ticketIdOf = (d: EventDetail): string | undefined => {
  const t = (d.data as { ticket?: { id?: unknown } } | undefined)?.ticket;
  return typeof t?.id === 'string' ? t.id : undefined;
};

/** The `made` moves of a transaction's ticket events: one write per account and shard touched. */
export function madeWrites(details: readonly EventDetail[]): TxWrite[] {
  const counts = new Map<string, { accountId: string; shard: string; n: number }>();
  for (const d of details) {
    const id = ticketIdOf(d);
    if (!id || !(COUNTED_TICKET_EVENTS as readonly string[]).includes(d.event)) continue;
    const shard = shardOfTicket(id);
    const k = `${d.accountId}\u0000${shard}`;
    const c = counts.get(k) ?? { accountId: d.accountId, shard, n: 0 };
    c.n++;
    counts.set(k, c);
  }
  return [...counts.values()].map((c) => tallies.updateAttributes({ accountId: c.accountId, shard: c.shard }, { set: TYPED, add: { made: c.n } }));
}

/**
 * The writes of a transaction's ticket events, whatever the path (a PUT, a bulk
 * job, a merge, an erasure): the outbox items and their `made` moves. Every
 * ticket event is recorded through here, once per transaction (one `made`
 * write per shard: a transaction may not name an item twice).
 */
export const ticketEventWrites = (events: readonly EventDetail[]): TxWrite[] => [...outboxWrites([...events], TICKET_EVENT_SOURCE), ...madeWrites(events)];

/** The marks of several events of an account's tickets applied in one transaction: one write per shard touched. */
export function appliedWrites(accountId: string, ticketIds: readonly string[]): TxWrite[] {
  const counts = new Map<string, number>();
  for (const id of ticketIds) counts.set(shardOfTicket(id), (counts.get(shardOfTicket(id)) ?? 0) + 1);
  return [...counts].map(([shard, n]) => tallies.updateAttributes({ accountId, shard }, { set: TYPED, add: { applied: n } }));
}

/** The consumer's mark that one event of this ticket has been applied. */
export const appliedWrite = (accountId: string, ticketId: string): TxWrite => appliedWrites(accountId, [ticketId])[0];

/** The keys of the account's tally shards, read beside the counts. */
export const tallyKeys = (accountId: string): Key[] => Array.from({ length: TICKET_CHANGE_SHARDS }, (_, i) => tallies.key({ accountId, shard: String(i) }));

/** Whether the tally items read (other items ignored) show every change applied. */
export function tallySettled(items: readonly Record<string, unknown>[]): boolean {
  return items.filter((i) => i.type === ticketEntities.ticketChangeTally.type).every((i) => Number(i.applied ?? 0) >= Number(i.made ?? 0));
}
