import * as z from '../zod.ts';
import { sendMessage } from '../events/sqs.ts';
import { logger } from '../logger.ts';
import { recountStep, type RecountMessage } from './counting.ts';
import * as repo from './repository.ts';

/**
 * The background side of view counts (decisions §21): a count of every ticket
 * of an account, a page per message of the view-recount queue, queued by a
 * view write and by the scheduled pass (accounts whose views use the clock,
 * or that still owe a count whose first message was lost).
 */

export const RecountMessageSchema = z.object({ accountId: z.string().check(z.minLength(1)), version: z.number().check(z.int(), z.gte(0)), after: z.optional(z.record(z.string(), z.string())) });

export async function sendRecount(queueUrl: string, msg: RecountMessage): Promise<void> {
  await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify(msg), MessageGroupId: msg.accountId });
}

/** Run one step and queue the next. */
export async function runRecountStep(msg: RecountMessage, queueUrl: string): Promise<void> {
  const next = await recountStep(msg);
  if (next) await sendRecount(queueUrl, next);
}

/** The scheduled pass: one count queued per listed account, at its current view set version. */
export async function queueScheduledCounts(queueUrl: string): Promise<{ accounts: number }> {
  const accounts = await repo.accountsWithTimeViews();
  for (const accountId of accounts) {
    const { set } = await repo.loadViews(accountId);
    await sendRecount(queueUrl, { accountId, version: set.version });
  }
  logger.info('views: scheduled counts queued', { accounts: accounts.length });
  return { accounts: accounts.length };
}
