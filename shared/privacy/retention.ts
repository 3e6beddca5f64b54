import { auditWrite, userActor, SYSTEM_ACTOR } from '../audits/service.ts';
import type { Principal } from '../auth/principal.ts';
import { transactWrite } from '../db/transact.ts';
import { logger } from '../logger.ts';
import { closedTicketIdsBefore, deleteTicket } from '../tickets/service.ts';
import type { Retention } from './model.ts';
import * as repo from './repository.ts';

/**
 * Retention of closed tickets (decisions §23). The setting is one item per
 * account; while it is set, the account is in the sweep's index. The daily
 * sweep deletes, account by account, the tickets closed before the
 * account's cutoff, oldest first, each as DELETE /v1/tickets/{id} would
 * (its transaction, ticket.deleted, attachments cleaned through that event,
 * an audit via "retention" by the system), a batch at a time.
 */

const DAY_MS = 86_400_000;
/** Tickets read and deleted per batch (a few at once: each is a few reads and one transaction). */
export const RETENTION_BATCH = 25;
const AT_ONCE = 5;
/** Most tickets one run deletes for one account, so every account gets its turn; the next run goes on where it stopped (the oldest first). */
export const RETENTION_PER_ACCOUNT_RUN = 20_000;

export async function getRetentionSetting(p: Pick<Principal, 'accountId'>): Promise<Retention> {
  return { closedTicketsDeleteAfterDays: (await repo.getRetention(p.accountId))?.closedTicketsDeleteAfterDays ?? null };
}

/** PUT /v1/retention: the setting, audited as a change of the account's settings. */
export async function setRetention(p: Principal, input: Retention): Promise<Retention> {
  const current = await getRetentionSetting(p);
  const at = new Date().toISOString();
  if (current.closedTicketsDeleteAfterDays === input.closedTicketsDeleteAfterDays) return current;
  await transactWrite([
    repo.retentionWrite({ accountId: p.accountId, closedTicketsDeleteAfterDays: input.closedTicketsDeleteAfterDays, updatedAt: at }),
    auditWrite({
      accountId: p.accountId,
      resource: { type: 'account', id: p.accountId },
      actor: userActor(p),
      via: 'api',
      changes: [{ field: 'retention.closedTicketsDeleteAfterDays', from: current.closedTicketsDeleteAfterDays, to: input.closedTicketsDeleteAfterDays }],
      at,
    }),
  ]);
  return { closedTicketsDeleteAfterDays: input.closedTicketsDeleteAfterDays };
}

export interface SweepOptions {
  /** Stop starting batches after this instant (epoch ms): the function's timeout, less a margin. */
  deadline?: number;
  perAccount?: number;
}

/** One account's sweep: batches of its oldest expired tickets deleted, until none is left, its share is done, or time is up. */
export async function sweepAccount(accountId: string, days: number, now: number, opts: SweepOptions = {}): Promise<{ deleted: number; done: boolean }> {
  const before = new Date(now - days * DAY_MS).toISOString();
  const caller = { accountId, system: 'automation' as const, automationId: 'retention' };
  const cap = opts.perAccount ?? RETENTION_PER_ACCOUNT_RUN;
  let deleted = 0;
  while (deleted < cap && (opts.deadline === undefined || Date.now() < opts.deadline)) {
    const ids = await closedTicketIdsBefore(accountId, before, Math.min(RETENTION_BATCH, cap - deleted));
    if (!ids.length) return { deleted, done: true };
    for (let i = 0; i < ids.length; i += AT_ONCE) {
      await Promise.all(
        ids.slice(i, i + AT_ONCE).map((id) =>
          deleteTicket(caller, id, { via: 'retention', actor: SYSTEM_ACTOR }).catch((err: unknown) => {
            // Gone meanwhile (deleted by someone else, or the view lagging behind a delete): nothing left to do for it.
            if ((err as Error).name !== 'NotFoundError') throw err;
          }),
        ),
      );
    }
    deleted += ids.length;
  }
  return { deleted, done: false };
}

/**
 * The daily sweep (`now`: the schedule's time; tests move it forward): every
 * account with a retention set, a page of accounts at a time. One account's
 * failure is logged and the others go on; what is left is the next run's.
 */
export async function sweepRetention(now: number, opts: SweepOptions = {}): Promise<{ accounts: number; deleted: number; unfinished: number }> {
  let accounts = 0;
  let deleted = 0;
  let unfinished = 0;
  let startKey: Record<string, string> | undefined;
  do {
    const page = await repo.retentionAccounts(100, startKey);
    for (const r of page.items) {
      if (!r.closedTicketsDeleteAfterDays) continue;
      accounts++;
      try {
        const out = await sweepAccount(r.accountId, r.closedTicketsDeleteAfterDays, now, opts);
        deleted += out.deleted;
        if (!out.done) unfinished++;
      } catch (err) {
        unfinished++;
        logger.error('retention: an account failed; the next run retries it', { accountId: r.accountId, err });
      }
    }
    startKey = page.nextKey;
  } while (startKey && (opts.deadline === undefined || Date.now() < opts.deadline));
  logger.info('retention: swept', { accounts, deleted, unfinished });
  return { accounts, deleted, unfinished };
}
