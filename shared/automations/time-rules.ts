/**
 * The hourly pass for time-based automations (decisions §8): the scheduled job
 * lists the open tickets of accounts with active time rules (gsi4 registry,
 * then gsi2 per account: Queries, never a Scan) and queues them in batches;
 * the queue's consumer evaluates each batch.
 */
import * as z from '../zod.ts';
import { sendMessageBatch } from '../events/sqs.ts';
import { logger } from '../logger.ts';
import { openTicketIdsPage } from '../tickets/service.ts';
import * as repo from './repository.ts';
import { runAutomations } from './service.ts';

/** Tickets per queue message: one consumer invocation evaluates at most this many. */
export const TICKETS_PER_MESSAGE = 50;
const PAGE = 1000;

export const TimeRuleBatchSchema = z.object({ accountId: z.string(), ticketIds: z.array(z.string()).check(z.minLength(1), z.maxLength(TICKETS_PER_MESSAGE)), now: z.iso.datetime() });
export type TimeRuleBatch = z.infer<typeof TimeRuleBatchSchema>;

async function sendAll(queueUrl: string, batches: TimeRuleBatch[]) {
  for (let i = 0; i < batches.length; i += 10) {
    const entries = batches.slice(i, i + 10).map((b, j) => ({ Id: String(j), MessageBody: JSON.stringify(b), MessageGroupId: b.accountId }));
    const out = await sendMessageBatch({ QueueUrl: queueUrl, Entries: entries });
    // A partial failure fails the job run; the next run (or the schedule's retry) covers those tickets again.
    if (out.Failed?.length) throw new Error(`could not queue ${out.Failed.length} time-rule batches: ${out.Failed[0].Message}`);
  }
}

/** Queue every open ticket of every account with time rules, evaluated as of `now`. */
export async function enqueueTimeRuleWork(queueUrl: string, now: Date): Promise<{ accounts: number; tickets: number; messages: number }> {
  const accounts = await repo.accountsWithTimeRules();
  let tickets = 0;
  let messages = 0;
  for (const accountId of accounts) {
    let startKey: Record<string, string> | undefined;
    do {
      const page = await openTicketIdsPage(accountId, PAGE, startKey);
      const batches: TimeRuleBatch[] = [];
      for (let i = 0; i < page.ids.length; i += TICKETS_PER_MESSAGE) batches.push({ accountId, ticketIds: page.ids.slice(i, i + TICKETS_PER_MESSAGE), now: now.toISOString() });
      await sendAll(queueUrl, batches);
      tickets += page.ids.length;
      messages += batches.length;
      startKey = page.nextKey;
    } while (startKey);
  }
  logger.info('automation time rules queued', { accounts: accounts.length, tickets, messages });
  return { accounts: accounts.length, tickets, messages };
}

/** Evaluate one batch: the account's automations are read once, then each ticket on its own. */
export async function evaluateBatch(batch: TimeRuleBatch): Promise<void> {
  const { automations } = await repo.loadAutomations(batch.accountId);
  const now = new Date(batch.now);
  for (const ticketId of batch.ticketIds) await runAutomations(batch.accountId, ticketId, { now, timeOnly: true, automations });
}
