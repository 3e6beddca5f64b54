import { auditWrite } from '../audits/service.ts';
import type { TxWrite } from '../db/transact.ts';
import { ticketEventWrites } from './change-tally.ts';
import type { TicketEventPayload } from './event-payloads.ts';
import type { TicketSatisfactionRating } from './model.ts';
import * as repo from './repository.ts';
import type { TicketRecord } from './repository.ts';
import { newTicketEvent } from './rules.ts';

/**
 * The writes that set a ticket's satisfaction rating (decisions §24): the
 * ticket replaced at the version read (a concurrent change conflicts and the
 * caller re-reads), ticket.rated with `eventRating`, and the audit (via
 * satisfaction, actor the requester). Nothing else of the ticket changes.
 */
export function ticketRatingWrites(current: TicketRecord, rating: TicketSatisfactionRating, eventRating: Record<string, unknown>): TxWrite[] {
  const next: TicketRecord = { ...current, satisfactionRating: rating, updatedAt: rating.ratedAt, version: current.version + 1 };
  const event = newTicketEvent(current.accountId, { event: 'ticket.rated', timestamp: rating.ratedAt, data: { id: current.id, rating: eventRating } } as TicketEventPayload);
  return [
    repo.replaceTicketWrite(next, current.version),
    ...ticketEventWrites([event]),
    auditWrite({
      accountId: current.accountId,
      resource: { type: 'ticket', id: current.id },
      actor: { type: 'requester', id: null },
      via: 'satisfaction',
      changes: [{ field: 'satisfactionRating', from: current.satisfactionRating, to: rating }],
      version: next.version,
      at: rating.ratedAt,
    }),
  ];
}
