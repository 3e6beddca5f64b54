import { reindexContacts } from '../contacts/api.ts';
import type { Key } from '../db/query.ts';
import { sendMessage } from '../events/sqs.ts';
import { reindexOrganizations } from '../organizations/api.ts';
import { reindexTickets } from '../tickets/service.ts';
import { reindexUsers } from '../users/api.ts';

/**
 * Admin reindex (issue #20): builds the index items of decisions §13 for
 * records written before them — the word index of users, contacts and
 * organizations and the ticket views. A job is a sequence of steps of one page
 * each; a step's message names the next, so the job is resumable (a crashed
 * step is redelivered) and idempotent (every write is keyed by the record and
 * holds only if the record is unchanged). Large accounts run in the background,
 * one step per message on the reindex queue.
 */
export const REINDEX_KINDS = ['users', 'contacts', 'organizations', 'tickets'] as const;
export type ReindexKind = (typeof REINDEX_KINDS)[number];

export interface ReindexMessage {
  accountId: string;
  kind: ReindexKind;
  startKey?: Key;
}

/** Records per step: one page, well within a consumer's timeout. */
export const REINDEX_PAGE = 100;

const STEPS: Record<ReindexKind, (accountId: string, limit: number, startKey?: Key) => Promise<{ records: number; nextKey?: Key }>> = {
  users: reindexUsers,
  contacts: reindexContacts,
  organizations: reindexOrganizations,
  tickets: reindexTickets,
};

/** Run one step; answers the step that follows, or null when the account is done. */
export async function reindexStep(msg: ReindexMessage): Promise<{ records: number; next: ReindexMessage | null }> {
  const { records, nextKey } = await STEPS[msg.kind](msg.accountId, REINDEX_PAGE, msg.startKey);
  if (nextKey) return { records, next: { accountId: msg.accountId, kind: msg.kind, startKey: nextKey } };
  const following = REINDEX_KINDS[REINDEX_KINDS.indexOf(msg.kind) + 1];
  return { records, next: following ? { accountId: msg.accountId, kind: following } : null };
}

/** The first step of an account's job. */
export const reindexStart = (accountId: string): ReindexMessage => ({ accountId, kind: REINDEX_KINDS[0] });

/** Queue a step (the background path); the account is the fair-queue group, so one big account does not hold up others. */
export async function enqueueReindex(queueUrl: string, msg: ReindexMessage): Promise<void> {
  await sendMessage({ QueueUrl: queueUrl, MessageBody: JSON.stringify(msg), MessageGroupId: msg.accountId });
}

/** Run a whole account's job in this process (small accounts, and the local CLI); answers the records visited per kind. */
export async function reindexAccount(accountId: string): Promise<Record<ReindexKind, number>> {
  const done = Object.fromEntries(REINDEX_KINDS.map((k) => [k, 0])) as Record<ReindexKind, number>;
  for (let msg: ReindexMessage | null = reindexStart(accountId); msg;) {
    const step = await reindexStep(msg);
    done[msg.kind] += step.records;
    msg = step.next;
  }
  return done;
}
