import { auditWrite } from '../audits/service.ts';
import type { AuditActor } from '../audits/model.ts';
import { requesterWrites } from '../contacts/service.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite } from '../db/transact.ts';
import { newEventDetail } from '../events/outbox.ts';
import { ticketEventWrites } from './change-tally.ts';
import * as repo from './repository.ts';

/** What an erased requester's ticket shows (decisions §23), and what stands for an erased value in its audit and event. */
export const ERASED_REQUESTER_NAME = 'Erased contact';
export const ERASED = '[erased]';

/**
 * An erasure's change of one ticket the erased contact requested (decisions
 * §23): requesterName "Erased contact", requesterEmail null, everything else
 * kept (a tag that is the address goes too); its words follow, the requester's count moves out, and its
 * ticket.updated event and audit (via "erasure") say "[erased]" where the
 * old values were. One transaction, version-checked. 'other' when the ticket
 * is gone or no longer requested by that address (nothing to do).
 */
export function eraseRequester(accountId: string, ticketId: string, email: string, actor: AuditActor): Promise<'erased' | 'other'> {
  return retryOnConflict(async () => {
    const current = await repo.getTicket(accountId, ticketId);
    const address = email.toLowerCase();
    const requested = current?.requesterEmail?.toLowerCase() === address;
    // A tag that is the address is theirs too (and would keep the ticket in the erasure's lookup).
    const tags = current?.tags.filter((t) => t.toLowerCase() !== address) ?? [];
    if (!current || (!requested && tags.length === current.tags.length)) return 'other';
    const at = new Date().toISOString();
    const next = { ...current, ...(requested ? { requesterName: ERASED_REQUESTER_NAME, requesterEmail: null } : {}), tags, updatedAt: at, version: current.version + 1 };
    const changes = [
      ...(requested
        ? [
            { field: 'requesterEmail', from: ERASED, to: null },
            { field: 'requesterName', from: current.requesterName === null ? null : ERASED, to: ERASED_REQUESTER_NAME },
          ]
        : []),
      ...(tags.length !== current.tags.length ? [{ field: 'tags', from: ERASED, to: tags }] : []),
    ];
    const updatedFields = Object.fromEntries(changes.map((c) => [c.field, { from: c.from, to: c.to }]));
    const event = newEventDetail(accountId, { event: 'ticket.updated', timestamp: at, data: { ticket: { id: ticketId, updatedFields } } });
    await transactWrite([
      repo.replaceTicketWrite(next, current.version),
      ...repo.ticketWordWrites(current, next),
      ...(requested ? await requesterWrites(accountId, [{ email: current.requesterEmail!, name: null, delta: -1 }]) : []),
      ...ticketEventWrites([event]),
      auditWrite({ accountId, resource: { type: 'ticket', id: ticketId }, actor, via: 'erasure', changes, version: next.version, at }),
    ]);
    return 'erased';
  });
}
