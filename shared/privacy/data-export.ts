import { objectKeys } from '../attachments/keys.ts';
import type { Principal } from '../auth/principal.ts';
import { getContact, toContactDto } from '../contacts/service.ts';
import type { Key } from '../db/query.ts';
import type { JobExecutor } from '../jobs/service.ts';
import { ticketMessagesPage, type MessageRecord } from '../messages/api.ts';
import { idsWithWord } from '../search/word-index.ts';
import { findTicket, toTicketDto, type TicketRecord } from '../tickets/service.ts';

/** A job as the runner hands it to an executor. */
type JobRecord = Parameters<JobExecutor['run']>[0];

/**
 * A person's data (decisions §23; GDPR Article 15) as a job type of the
 * runner: one item, the contact. Its step gathers the contact as GET answers
 * it, every ticket they request (found by their whole address in the ticket
 * word index, a page at a time) and the messages of those tickets that are
 * theirs or were sent to them (requests and responses; internal notes are
 * the agents' own), attachments described without their files; and writes
 * one JSON document to the bucket. The completed job's `download` is a
 * presigned URL of it (15 minutes, fresh on every read of the job).
 */

const TICKETS_AT_ONCE = 10;

/** A message as the document holds it: the API's fields, attachments without keys or URLs. */
const exported = ({ accountId: _a, sendEmail: _s, attachments, ...m }: MessageRecord) => ({ ...m, attachments: attachments.map(({ key: _k, ...a }) => a) });

async function ticketsOf(accountId: string, email: string): Promise<TicketRecord[]> {
  const out: TicketRecord[] = [];
  let startKey: Key | undefined;
  do {
    const page = await idsWithWord(accountId, 'ticket', email, 100, startKey);
    for (let i = 0; i < page.ids.length; i += TICKETS_AT_ONCE) {
      const found = await Promise.all(page.ids.slice(i, i + TICKETS_AT_ONCE).map((id) => findTicket(accountId, id)));
      out.push(...found.filter((t): t is TicketRecord => t?.requesterEmail?.toLowerCase() === email.toLowerCase()));
    }
    startKey = page.nextKey;
  } while (startKey);
  return out;
}

async function messagesOf(accountId: string, ticketId: string): Promise<MessageRecord[]> {
  const out: MessageRecord[] = [];
  let startKey: Key | undefined;
  do {
    const page = await ticketMessagesPage(accountId, ticketId, 100, startKey);
    out.push(...page.items.filter((m) => m.type !== 'note'));
    startKey = page.nextKey;
  } while (startKey);
  return out;
}

/** The document of a contact's data. */
export async function personalData(p: Principal, contactId: string) {
  const { accountId } = p;
  const contact = await getContact(p, contactId);
  const tickets = await ticketsOf(accountId, contact.email);
  const messages: MessageRecord[] = [];
  for (let i = 0; i < tickets.length; i += TICKETS_AT_ONCE) {
    const found = await Promise.all(tickets.slice(i, i + TICKETS_AT_ONCE).map((t) => messagesOf(accountId, t.id)));
    messages.push(...found.flat());
  }
  return { contact: await toContactDto(accountId, contact), tickets: tickets.map(toTicketDto), messages: messages.map(exported) };
}

export async function exportStep(job: JobRecord, contactId: string): Promise<void> {
  const doc = await personalData(job.principal, contactId);
  const { putExportDocument } = await import('../attachments/privacy.ts');
  await putExportDocument(objectKeys.exportDocument(job.accountId, job.id), JSON.stringify({ exportedAt: new Date().toISOString(), ...doc }));
}
