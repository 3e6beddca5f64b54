/**
 * Arrange and inspect steps that go to the table, for what the API cannot do:
 * put the store in a state no request produces (back-dated records, a large
 * account seeded fast, a crash halfway through), or read what the store holds
 * to prove a write was whole. Each helper says why the API will not do. The
 * e2e tests reach repositories only through here (ESLint: eslint.config.js);
 * older helpers of the kind are in desk.ts (tickets, outbox) and helpdesk.ts
 * (closing a ticket, a ticket's version, a stored contact).
 */
import { newId } from '#shared/ids.ts';
import type { StateRecord } from '#shared/sla/repository.ts';
import type { TicketRecord } from '#shared/tickets/repository.ts';

export type StoredSlaState = StateRecord;

/** A ticket as stored, version included: the API shows no version, and a version counts the writes a ticket got. */
export async function storedTicket(accountId: string, ticketId: string): Promise<TicketRecord> {
  const { getTicket } = await import('#shared/tickets/repository.ts');
  const ticket = await getTicket(accountId, ticketId);
  if (!ticket) throw new Error(`no ticket ${ticketId} stored`);
  return ticket;
}

/** Replace a stored ticket with `changes` (version bumped) and nothing else: every API write also records an event and an audit. */
export async function changeTicketInStore(accountId: string, ticketId: string, changes: Partial<TicketRecord>): Promise<void> {
  const { replaceTicketWrite } = await import('#shared/tickets/repository.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const current = await storedTicket(accountId, ticketId);
  await transactWrite([replaceTicketWrite({ ...current, ...changes, version: current.version + 1 }, current.version)]);
}

/** Write a ticket record (see desk.ts ticketRecord) as the repository creates one: back-dated, which the API never is (it stamps each write with its own time). */
export async function createTicketInStore(record: TicketRecord): Promise<void> {
  const { createTicket } = await import('#shared/tickets/repository.ts');
  await createTicket(record, []);
}

/** A ticket's SLA state as the consumer stored it, or null: the API works one out from the ticket when none is stored, so it cannot tell whether the consumer has run. */
export async function storedSlaState(accountId: string, ticketId: string): Promise<StoredSlaState | null> {
  const { getState } = await import('#shared/sla/repository.ts');
  return getState(accountId, ticketId);
}

/** The options of a field as stored, with their usage counts: the API shows no count (it only refuses to delete an option in use). */
export async function storedOptions(accountId: string, fieldId: string) {
  const { listOptions } = await import('#shared/ticket-fields/repository.ts');
  return listOptions(accountId, fieldId);
}

/** The accounts the hourly time-rule job visits: no route lists them. */
export async function timeRuleAccounts(): Promise<string[]> {
  const { accountsWithTimeRules } = await import('#shared/automations/repository.ts');
  return accountsWithTimeRules();
}

/** The lookup item the authorizer reads for an API key (its principal and usage key): no route shows it. */
export async function storedKeyLookup(apiKey: string) {
  const { getApiKeyByHash } = await import('#shared/auth/key-lookups.ts');
  const { hashApiKey } = await import('#shared/auth/api-keys.ts');
  return getApiKeyByHash(hashApiKey(apiKey));
}

/** An API key's record as stored, revocation time included (to prove the time an audit reports is the one written). */
export async function storedApiKey(accountId: string, keyId: string) {
  const { getApiKey } = await import('#shared/accounts/repository.ts');
  return getApiKey(accountId, keyId);
}

/**
 * Delete an organization as its delete transaction does, without the unlinking of its contacts
 * that the API's delete always goes on to (the consumer of organization.deleted): the state a
 * crash between the two leaves.
 */
export async function deleteOrganizationInStore(accountId: string, organizationId: string): Promise<void> {
  const { deleteOrganization, getOrganization } = await import('#shared/organizations/repository.ts');
  const organization = await getOrganization(accountId, organizationId);
  if (!organization) throw new Error(`no organization ${organizationId} stored`);
  await deleteOrganization(organization);
}

/** A contact as its repository stores it, created at `at` (ids are time-ordered); `overrides` set any field. */
export function contactRecord(accountId: string, at: Date, overrides: { name: string; email: string } & Record<string, unknown>) {
  return { id: newId('con', at.getTime()), accountId, organizationId: null, notes: null, createdAt: at.toISOString(), updatedAt: at.toISOString(), version: 1, ...overrides };
}

/**
 * Store one account's contacts as their repository writes them (the contact, its email guard,
 * its search words) and move the account's contact counter by as many: a large account without
 * thousands of API calls. `words: false` leaves the search words out, as versions before the word index
 * stored contacts.
 */
export async function storeContacts(records: ReturnType<typeof contactRecord>[], { words = true } = {}): Promise<void> {
  const { createContactWrites } = await import('#shared/contacts/repository.ts');
  const { batchPut } = await import('#shared/db/query.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const { listCounter } = await import('#shared/db/list-counter.ts');
  if (!records.length) return;
  const items = records.flatMap((c) => createContactWrites(c, null).flatMap((w) => (w.item.Put && (words || w.item.Put.Item!.type !== 'searchWord') ? [w.item.Put.Item!] : [])));
  await batchPut(items, { concurrency: 8 });
  await transactWrite([listCounter.write(records[0].accountId, 'CONTACTS', records.length)]);
}

/**
 * Move a webhook's last secret rotation back to `at` (version bumped, as any write of it): the 24-hour
 * overlap of a rotation's two signatures ends with time alone, which no request can make pass.
 */
export async function backdateWebhookRotation(accountId: string, webhookId: string, at: Date): Promise<void> {
  const { getWebhook, replaceWebhook } = await import('#shared/webhooks/repository.ts');
  const current = await getWebhook(accountId, webhookId, true);
  if (!current) throw new Error(`no webhook ${webhookId} stored`);
  await replaceWebhook({ ...current, signingSecretRotatedAt: at.toISOString(), version: current.version + 1 }, current.version);
}

/**
 * A survey link's token for a ticket (decisions §24), valid until `validUntil` (epoch ms; the past makes an expired
 * one): the API makes tokens only inside the survey mail, and no request makes an expired one.
 */
export async function surveyTokenInStore(accountId: string, ticketId: string, validUntil = Date.now() + 28 * 86_400_000): Promise<string> {
  const { tokenWrite } = await import('#shared/satisfaction/repository.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const token = Array.from({ length: 32 }, () => 'abcdefghijklmnopqrstuvwxyz234567'[Math.floor(Math.random() * 32)]).join('');
  await transactWrite([tokenWrite({ token, accountId, ticketId, createdAt: new Date().toISOString(), validUntil, expiresAt: Math.ceil(validUntil / 1000) + 86_400 })]);
  return token;
}

/**
 * What the view counts hold of an account's ticket events, for an account with no view (the API reads a count only
 * through a view): whether this event is marked applied, and the change tally's `made` and `applied` summed over its shards.
 */
export async function storedViewTally(accountId: string, eventId: string): Promise<{ marked: boolean; made: number; applied: number }> {
  const { hasEventMark } = await import('#shared/views/repository.ts');
  const { tallyKeys } = await import('#shared/tickets/change-tally.ts');
  const { batchGet } = await import('#shared/db/query.ts');
  const items = await batchGet(tallyKeys(accountId), { consistent: true });
  const sum = (f: string) => items.reduce((n, i) => n + Number(i[f] ?? 0), 0);
  return { marked: await hasEventMark(accountId, eventId), made: sum('made'), applied: sum('applied') };
}

/**
 * Store an account's views as the views repository writes them (no conditions, newest first), with the account's
 * view set moved on as a create moves it (its version, a count owed): an account at the views' limits (120 views)
 * without 120 creates one after another, each re-reading every view. Up to 99 views a transaction (with the set);
 * no audit, and no background count is queued (the scheduled pass would run it).
 */
export async function storeViews(accountId: string, views: { title: string; personal: boolean; ownerId: string | null }[]): Promise<void> {
  const repo = await import('#shared/views/repository.ts');
  for (let i = 0; i < views.length; i += 99) {
    const { set } = await repo.loadViews(accountId, { consistent: true });
    const at = new Date().toISOString();
    const records = views.slice(i, i + 99).map((v) => ({
      id: newId('view'),
      accountId,
      conditions: { all: [], any: [] },
      sort: { by: 'updatedAt', order: 'desc' } as const,
      rev: 1,
      count: 0,
      ready: false,
      createdAt: at,
      updatedAt: at,
      ...v,
    }));
    await repo.commitViews(accountId, { version: set.version + 1, timeViews: set.timeViews, counting: true }, records.map(repo.putViewWrite));
  }
}

/** An account's ticket word items under one initial (what the word index holds): the API shows only what a search finds. */
export async function ticketWordItems(accountId: string, initial: string): Promise<{ word: string; id: string; f: Record<string, unknown> }[]> {
  const { ddb, tableName } = await import('#shared/db/client.ts');
  const { QueryCommand } = await import('@aws-sdk/lib-dynamodb');
  const out = await ddb.send(
    new QueryCommand({ TableName: tableName(), KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': `A#${accountId}#W#ticket#${initial}` }, ConsistentRead: true }),
  );
  return (out.Items ?? []).map((i) => ({ word: String(i.sk).split('\u0001')[0], id: String(i.id), f: i.f as Record<string, unknown> }));
}

/**
 * Word items for a ticket's id words, as the index wrote them before those words went unindexed, with the filter
 * values given (stale ones: the ticket has changed since): what an account written earlier still holds.
 */
export async function storeLegacyTicketIdWords(ticket: Pick<TicketRecord, 'accountId' | 'id'>, filters: Record<string, string | null>): Promise<void> {
  const { indexWrites } = await import('#shared/search/word-index.ts');
  const { transactWrite } = await import('#shared/db/transact.ts');
  const { fold } = await import('#shared/search/words.ts');
  const words = [fold(ticket.id), fold(ticket.id).slice('tkt_'.length)];
  await transactWrite(indexWrites('ticket', null, { accountId: ticket.accountId, id: ticket.id, words, sort: { status: `0#${ticket.id}`, priority: `0#${ticket.id}` }, filters }));
}
