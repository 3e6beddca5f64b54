import { transactWrite, type TxWrite } from '../db/transact.ts';
import { newDomainEvent, outboxWrites } from '../events/outbox.ts';
import { distributes, isLive } from './distribution.ts';
import { GROUP_CAPACITY_CHANGED, GROUP_EVENT_SOURCE } from './events.ts';
import * as repo from './repository.ts';

/** The write that asks the distribution consumer to backfill groups (capacity freed, a group distributing again). */
export const backfillWrites = (accountId: string, groupIds: string[], userId?: string): TxWrite[] =>
  outboxWrites([newDomainEvent(accountId, GROUP_CAPACITY_CHANGED, { groupIds, ...(userId ? { userId } : {}) })], GROUP_EVENT_SOURCE);

/** Assign one waiting ticket (the tickets service does it through its update plan); 'none' when nobody can take it. */
export type AssignWaiting = (accountId: string, ticketId: string) => Promise<'assigned' | 'none' | 'gone'>;

/** Assignments one backfill run makes before it hands the rest to a follow-up event (bounded work per message). */
const BACKFILL_BATCH = 50;

/**
 * Backfill a group: assign its oldest waiting tickets while members have
 * capacity. Every assignment is a conditional transaction, so concurrent runs
 * and redelivered requests never put an agent over a cap or assign a ticket twice.
 */
export async function backfillGroup(accountId: string, groupId: string, assign: AssignWaiting): Promise<number> {
  const g = await repo.getGroup(accountId, groupId);
  if (!isLive(g) || !distributes(g)) return 0;
  let assignedCount = 0;
  let after: string | undefined;
  for (;;) {
    const ids = await repo.waitingTicketIds(accountId, groupId, 25, after);
    if (!ids.length) return assignedCount;
    for (const id of ids) {
      const r = await assign(accountId, id);
      if (r === 'assigned') assignedCount++;
      // Nobody can take this ticket; in modes other than skills nobody can take any other either.
      if (r === 'none' && g.distributionMode !== 'skills') return assignedCount;
      if (assignedCount >= BACKFILL_BATCH) {
        await transactWrite(backfillWrites(accountId, [groupId]));
        return assignedCount;
      }
    }
    after = ids[ids.length - 1];
  }
}
