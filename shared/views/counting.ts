import { retryOnConflict } from '../db/retry.ts';
import type { TxWrite } from '../db/transact.ts';
import { appliedWrite, appliedWrites } from '../tickets/change-tally.ts';
import { logger } from '../logger.ts';
import { findTicketNow, matchingPage, type TicketRecord } from '../tickets/service.ts';
import { matchesView } from './conditions.ts';
import * as repo from './repository.ts';
import type { Membership, ViewRecord, ViewSet } from './repository.ts';

/**
 * Live view counts (decisions §21). A ticket's membership item lists the views
 * (`<viewId>:<rev>`) it is counted in, and each view's count is the number of
 * membership items naming it: every transaction that changes a membership
 * moves those counts with it. Settling a ticket judges the ticket as it is now
 * against every current view, before (its membership) and after (its
 * judgement), and commits the difference, checked two ways: the membership by
 * its revision (read before the ticket), the views by the set's version.
 * So a judgement made from anything since changed never lands (it re-reads),
 * settling twice changes nothing, and a count is exact whenever no settling is
 * in flight. The ticket events settle their ticket (and mark the event applied
 * in the change tally, once); a new or edited view settles every ticket once
 * in the background (`ready` when done); the scheduled pass settles the
 * tickets of accounts whose views use the clock.
 */

const keyOf = (v: Pick<ViewRecord, 'id' | 'rev'>) => `${v.id}:${v.rev}`;
/** Count moves per transaction: with the membership, the two checks and the event's two writes, under DynamoDB's 100 items. */
const MAX_MOVES = 90;

interface Loaded {
  set: ViewSet;
  views: ViewRecord[];
}

interface Known {
  loaded?: Loaded;
  membership?: Membership | null;
}

/** The keys a ticket should have now. */
const judged = (t: TicketRecord | null, views: readonly ViewRecord[], now: number) => (t ? views.filter((v) => matchesView(t, v.conditions, now)).map(keyOf) : []);

/** What settling would change: the moves (key, +1/-1) and the keys kept. Keys of views gone or edited since leave without a move. */
function difference(had: readonly string[], want: readonly string[], views: readonly ViewRecord[]) {
  const current = new Set(views.map(keyOf));
  const kept = had.filter((k) => current.has(k));
  const moves: [string, 1 | -1][] = [...want.filter((k) => !kept.includes(k)).map((k): [string, 1] => [k, 1]), ...kept.filter((k) => !want.includes(k)).map((k): [string, -1] => [k, -1])];
  return { kept, moves, dropped: had.length !== kept.length };
}

/** One event marked applied: its mark (which a second apply fails) and the change tally's `applied`. */
const markWrites = (accountId: string, ticketId: string, eventId: string): TxWrite[] => [repo.eventMarkWrite(accountId, eventId), appliedWrite(accountId, ticketId)];

/** One transaction of settling; true when the ticket is settled (and the event, if any, applied). */
async function settleStep(accountId: string, ticketId: string, eventId: string | undefined, known: Known, now: number): Promise<boolean> {
  const loaded = known.loaded ?? (await repo.loadViews(accountId, { consistent: true }));
  if (!loaded.views.length) {
    // No views: nothing to judge, so neither the ticket nor its membership is read. A membership left naming views
    // since deleted stays as it is: keys of views gone never count (difference), and the next view's background count
    // reads every membership and drops them. The event is still marked and tallied: counts read `fresh` only once
    // every change is applied, views or not (docs/performance.md, "The pipeline's cost per event").
    if (eventId) await repo.transactWrite(markWrites(accountId, ticketId, eventId));
    return true;
  }
  const membership = known.membership !== undefined ? known.membership : await repo.getMembership(accountId, ticketId);
  // The ticket is read after its membership (strongly consistent): whatever settled it before that read saw an older
  // ticket, and whatever settles it after fails this write's revision check, so a judgement never goes back in time.
  const ticket = await findTicketNow(accountId, ticketId);
  const had = membership?.keys ?? [];
  const want = judged(ticket, loaded.views, now);
  const { kept, moves, dropped } = difference(had, want, loaded.views);
  const step = moves.slice(0, MAX_MOVES);
  const last = moves.length <= MAX_MOVES;
  const keys = last ? want : [...kept.filter((k) => !step.some(([s, d]) => s === k && d < 0)), ...step.filter(([, d]) => d > 0).map(([k]) => k)];
  const writes: TxWrite[] = [];
  if (moves.length || dropped) {
    writes.push(repo.membershipWrite({ accountId, ticketId, keys, rev: membership?.rev ?? 0 }, membership?.rev ?? 0), repo.viewsUnchangedCheck(accountId, loaded.set.version));
    for (const [k, d] of step) writes.push(repo.countWrite(accountId, k.slice(0, k.lastIndexOf(':')), d));
  }
  if (last && eventId) writes.push(...markWrites(accountId, ticketId, eventId));
  if (writes.length) await repo.transactWrite(writes);
  return last;
}

/** Settle one ticket (in steps of at most MAX_MOVES moves); with `eventId`, also mark that event applied, once. */
export async function settleTicket(accountId: string, ticketId: string, opts: { eventId?: string; known?: Known; now?: number } = {}): Promise<void> {
  let known = opts.known ?? {};
  for (;;) {
    let first = true;
    const done = await retryOnConflict(async () => {
      // What the caller read serves the first attempt only: after a lost race everything is read again.
      const use = first ? known : {};
      first = false;
      try {
        return await settleStep(accountId, ticketId, opts.eventId, use, opts.now ?? Date.now());
      } catch (err) {
        if (err instanceof repo.AlreadyAppliedError) return true;
        throw err;
      }
    });
    if (done) return;
    known = {};
  }
}

const chains = new Map<string, Promise<void>>();

/** One after another per account in this process: every count change checks the account's view set, so side by side they would only contend for it. */
function chained(accountId: string, work: () => Promise<void>): Promise<void> {
  const prev = chains.get(accountId) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(work);
  const tail = run.catch(() => undefined);
  chains.set(accountId, tail);
  void tail.then(() => {
    if (chains.get(accountId) === tail) chains.delete(accountId);
  });
  return run;
}

interface Unjudged {
  ticketId: string;
  eventId: string;
  done: (err?: unknown) => void;
}

/** Marks per gathered transaction: with one tally write per shard, under DynamoDB's 100 items. */
const MAX_MARKS = 90;
/** The marks waiting, by account, while that account's marks are being written. */
const gathering = new Map<string, Unjudged[]>();

/** Mark one event of an account with no view applied, alone (a redelivery's mark is already there: nothing to do). */
const markOne = (accountId: string, u: Pick<Unjudged, 'ticketId' | 'eventId'>) =>
  retryOnConflict(() => repo.transactWrite(markWrites(accountId, u.ticketId, u.eventId))).catch((err: unknown) => {
    if (!(err instanceof repo.AlreadyAppliedError)) throw err;
  });

/**
 * The marks of the events gathered: all in one transaction (each event's mark,
 * and the tally's `applied` moved by the number of events per shard), so that
 * either every one is applied once or none is. If any mark is already there (a
 * redelivery) or the transaction fails otherwise, each event goes alone, with
 * its own outcome. Never throws: each event's caller hears of its own.
 */
async function flushMarks(accountId: string, list: Unjudged[]): Promise<void> {
  if (list.length > 1) {
    try {
      await retryOnConflict(() =>
        repo.transactWrite([
          ...list.map((u) => repo.eventMarkWrite(accountId, u.eventId)),
          ...appliedWrites(
            accountId,
            list.map((u) => u.ticketId),
          ),
        ]),
      );
      for (const u of list) u.done();
      return;
    } catch {
      // each alone, below
    }
  }
  await Promise.all(
    list.map((u) =>
      markOne(accountId, u).then(
        () => u.done(),
        (err: unknown) => u.done(err ?? new Error('view counts: the mark failed')),
      ),
    ),
  );
}

/**
 * Mark an event of an account with no view applied. An account's marks are
 * written one transaction at a time (so they never contend with each other for
 * the tally's shards), and what arrives meanwhile goes in the next: the events
 * that come in one turn of the event loop (an SQS batch's records, which run
 * side by side and share one read of the views) or while a transaction is out.
 */
function markApplied(accountId: string, ticketId: string, eventId: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const u: Unjudged = { ticketId, eventId, done: (err) => (err === undefined ? resolve() : reject(err as Error)) };
    const waiting = gathering.get(accountId);
    if (waiting) return void waiting.push(u);
    const pending = [u];
    gathering.set(accountId, pending);
    setImmediate(() => {
      void (async () => {
        while (pending.length) await flushMarks(accountId, pending.splice(0, MAX_MARKS));
        gathering.delete(accountId);
      })();
    });
  });
}

/** Reads one SQS batch shares (the consumer's batch memo). */
type Memo = <T>(key: string, load: () => Promise<T>) => Promise<T>;

/**
 * Apply one ticket event to the account's counts. The account's views are
 * read once per SQS batch (`memo`): every event of the batch was committed
 * before that read, and a judgement from views changed since never lands (the
 * count change checks the set's version; an account that gains its first view
 * has every ticket counted by that view's background count, which reads after
 * it). With no view there is nothing to judge: the event is only marked
 * applied, with the others of its batch. Otherwise the ticket is settled, the
 * account's events one after another.
 *
 * A ticket.created (`created`) is settled without reading its membership: a
 * new ticket has none. A membership is never deleted, and one written since
 * (a later event settled first) fails the membership write's condition, so
 * that event is settled again with everything read. When the ticket enters no
 * view there is no membership write to check it, and nothing to undo either:
 * whatever settled first judged a newer ticket.
 */
export async function applyTicketEvent(accountId: string, ticketId: string, eventId: string, memo?: Memo, opts: { created?: boolean } = {}): Promise<void> {
  const load = () => repo.loadViews(accountId, { consistent: true });
  const loaded = await (memo ? memo(`views:${accountId}`, load) : load());
  if (!loaded.views.length) return markApplied(accountId, ticketId, eventId);
  return chained(accountId, () => settleTicket(accountId, ticketId, { eventId, known: { loaded, ...(opts.created ? { membership: null } : {}) } }));
}

/** Tickets per background step (one message of the view-recount queue). */
export const RECOUNT_PAGE = 100;

export interface RecountMessage {
  accountId: string;
  /** The view set's version the count was queued for: a later view write queues its own, and this one stops. */
  version: number;
  after?: Record<string, string>;
}

/**
 * One step of an account's background count: a page of its tickets settled
 * against its views. Answers the next step's message, or null when done (or
 * superseded). At the end every view not yet `ready` becomes so.
 */
export async function recountStep(msg: RecountMessage, now = Date.now()): Promise<RecountMessage | null> {
  const loaded = await repo.loadViews(msg.accountId, { consistent: true });
  if (loaded.set.version !== msg.version) return null;
  const page = await matchingPage(msg.accountId, { sortBy: 'created_at', order: 'asc' }, () => true, RECOUNT_PAGE, msg.after);
  const members = new Map(
    (
      await repo.getMemberships(
        msg.accountId,
        page.tickets.map((t) => t.id),
      )
    ).map((m) => [m.ticketId, m]),
  );
  for (const t of page.tickets) {
    const m = members.get(t.id) ?? null;
    const { moves, dropped } = difference(m?.keys ?? [], judged(t, loaded.views, now), loaded.views);
    if (!moves.length && !dropped) continue;
    try {
      await settleTicket(msg.accountId, t.id, { known: { loaded, membership: m }, now });
    } catch (err) {
      if (err instanceof repo.StaleViewsError) return null; // the views changed: the write that changed them queued a count of its own
      throw err;
    }
  }
  if (page.nextKey) return { ...msg, after: page.nextKey as Record<string, string> };
  await repo.finishCount(msg.accountId, loaded, msg.version);
  logger.info('views: background count done', { accountId: msg.accountId, version: msg.version });
  return null;
}
