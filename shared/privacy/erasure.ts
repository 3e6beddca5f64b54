import { deleteAttachmentWrites } from '../attachments/redaction.ts';
import { eraseTicketAuditValues } from '../audits/erasure.ts';
import { auditWrite, userActor } from '../audits/service.ts';
import type { AuditActor } from '../audits/model.ts';
import { eraseContact } from '../contacts/service.ts';
import { retryOnConflict } from '../db/retry.ts';
import { transactWrite } from '../db/transact.ts';
import { forgetThread, forgetUndeliverable } from '../email/erasure.ts';
import type { JobExecutor } from '../jobs/service.ts';
import type { ErasureInput } from './jobs.ts';
import { getMessageRecord, rewriteMessageWrites, ticketMessagesPage, type MessageRecord } from '../messages/api.ts';
import { idsWithWord } from '../search/word-index.ts';
import { ERASED, eraseRequester } from '../tickets/erasure.ts';

/** A job as the runner hands it to an executor. */
type JobRecord = Parameters<JobExecutor['run']>[0];

/**
 * Erasure of a contact (decisions §23; GDPR Article 17) as a job type of the
 * runner: one item, the contact, done over as many steps as it takes. Each
 * step takes the next tickets still requested by the contact's address
 * (the ticket word index, by the whole address: a key lookup, a page at a
 * time, whatever the account holds) and erases each: the messages the
 * contact wrote read `[erased]` without attachments (records in the
 * message's transaction, files and raw mail from the bucket after), the
 * addresses in the others' recipients and delivery read `[erased]`, the
 * thread's Message-IDs and reply token go, the audits' values that held the
 * name or address read `[erased]`, and last the ticket itself loses its
 * requester (which takes it out of the lookup). When no ticket is left, the
 * contact is deleted as DELETE would (its tombstone for the export) with the
 * erasure's audit, and its address's counters go. Every part is idempotent,
 * so a step cut short is simply run again.
 */

/** Tickets a step erases (a few at once): each is its messages, audits and thread, and one transaction. */
export const ERASURE_TICKETS_PER_STEP = 25;
const AT_ONCE = 5;

const lower = (s: string | null | undefined) => (s ?? '').trim().toLowerCase();
const scrubbed = (list: readonly string[], email: string) => list.map((a) => (lower(a) === email ? ERASED : a));

/** A message of an erased contact's ticket as the erasure leaves it: theirs reads [erased] with nothing attached; others keep their words, without the address. */
function erasedMessage(m: MessageRecord, contactId: string, email: string, at: string): MessageRecord | null {
  const theirs = m.authorId === contactId || lower(m.authorId) === email;
  const delivery = m.emailDelivery && {
    ...m.emailDelivery,
    to: scrubbed(m.emailDelivery.to, email),
    cc: scrubbed(m.emailDelivery.cc, email),
    skipped: scrubbed(m.emailDelivery.skipped, email),
    reason: m.emailDelivery.reason && lower(m.emailDelivery.reason).includes(email) ? ERASED : m.emailDelivery.reason,
  };
  const next: MessageRecord = {
    ...m,
    ...(theirs ? { content: ERASED, textContent: ERASED, attachments: [], authorId: contactId } : {}),
    ccs: m.ccs.filter((c) => lower(c.email) !== email),
    recipients: scrubbed(m.recipients, email),
    emailDelivery: delivery,
    updatedAt: at,
  };
  const same = JSON.stringify({ ...next, updatedAt: m.updatedAt }) === JSON.stringify(m);
  return same ? null : next;
}

/** One message rewritten (with its attachments' records deleted in the same transaction); answers the files to delete. */
async function eraseMessage(accountId: string, first: MessageRecord, contactId: string, email: string): Promise<string[]> {
  return retryOnConflict(async () => {
    const m = (await getMessageRecord(accountId, first.id)) ?? first;
    const next = erasedMessage(m, contactId, email, new Date().toISOString());
    if (!next) return [];
    const dropped = m.attachments.filter((a) => !next.attachments.includes(a));
    await transactWrite([...rewriteMessageWrites(m, next), ...deleteAttachmentWrites(accountId, dropped)]);
    return dropped.filter((a) => a.key).map((a) => a.key);
  });
}

/** Everything of one ticket, the requester last. */
async function eraseTicket(accountId: string, ticketId: string, contactId: string, erased: ErasureInput, actor: AuditActor): Promise<'erased' | 'other'> {
  const email = lower(erased.email);
  const files: string[] = [];
  let startKey: Record<string, string> | undefined;
  do {
    const page = await ticketMessagesPage(accountId, ticketId, 100, startKey);
    for (const m of page.items) files.push(...(await eraseMessage(accountId, m, contactId, email)));
    startKey = page.nextKey;
  } while (startKey);
  files.push(...(await forgetThread(accountId, ticketId)));
  // The S3 client loads from its own chunk, only when there are files.
  if (files.length) await (await import('../attachments/privacy.ts')).deleteFiles(files);
  await eraseTicketAuditValues(accountId, ticketId, [erased.email, erased.name]);
  return eraseRequester(accountId, ticketId, erased.email, actor);
}

/**
 * One step of an erasure: the next tickets, or, when none is left, the
 * contact. 'unfinished' until the contact is gone.
 */
export async function eraseStep(job: JobRecord, contactId: string): Promise<'unfinished' | void> {
  const erased = job.input as ErasureInput;
  const actor = userActor(job.principal);
  const { ids: tickets } = await idsWithWord(job.accountId, 'ticket', erased.email, ERASURE_TICKETS_PER_STEP);
  if (tickets.length) {
    let changed = 0;
    for (let i = 0; i < tickets.length; i += AT_ONCE) {
      const done = await Promise.all(tickets.slice(i, i + AT_ONCE).map((id) => eraseTicket(job.accountId, id, contactId, erased, actor)));
      changed += done.filter((d) => d === 'erased').length;
    }
    // A step that changed no ticket found only words the address no longer backs: going on would find them again for ever.
    if (changed) return 'unfinished';
  }
  const audit = auditWrite({ accountId: job.accountId, resource: { type: 'contact', id: contactId }, actor, via: 'erasure', changes: [], deleted: true });
  const outcome = await eraseContact(job.accountId, contactId, erased.email, [audit]);
  // Deleted meanwhile by a DELETE: its own audit trail is that request's; the erasure still records itself.
  if (outcome === 'gone') await transactWrite([audit]);
  await forgetUndeliverable(job.accountId, erased.email);
}
