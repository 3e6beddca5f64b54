/**
 * What each variant can say, checked against DynamoDB Local rather than read
 * off its documentation:
 * - one transaction of a conditional Put (contact, absent), a conditional Put
 *   on another entity (email guard, absent), an Update ADD (list counter) and a
 *   ConditionCheck (requester count still n); and a Put conditioned on
 *   `version = :v` (optimistic locking);
 * - on cancellation, the per-item reasons, so the failed index becomes that
 *   write's domain error (shared/db/transact.ts's contract);
 * - whether the items it writes are today's items, and whether it reads the
 *   items today's layer wrote (the issue: "the same items on disk").
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { AlreadyExistsError, ConflictError } from '../../shared/domain/errors.ts';
import { contactNo, documentClient, keys, type ContactRecord } from './common.ts';
import { createTable, deleteTable } from './table.ts';
import type { VariantName } from './variants/index.ts';

/** A count moved while we computed with it (shared/contacts/repository.ts). */
class StaleCountError extends ConflictError {}

const stale = (m: string) => () => new StaleCountError(m);
const exists = (c: ContactRecord) => () => new AlreadyExistsError(`A contact with email ${c.email} already exists`);

/** What the scenarios need of a variant, written with that variant's own declarations. */
interface TxAdapter {
  /** Contact Put (absent; no error of its own), guard Put (absent: AlreadyExists), counter ADD, requester ConditionCheck (count still `count`: StaleCount). */
  create(c: ContactRecord, count: number, seen: (codes: string[]) => void): Promise<void>;
  /** Contact Put on `version = :v` (StaleCount) + counter ADD. */
  replaceIfVersion(c: ContactRecord, version: number, seen: (codes: string[]) => void): Promise<void>;
  getContact(accountId: string, id: string): Promise<ContactRecord | null>;
  listByName(accountId: string): Promise<ContactRecord[]>;
  /** Reads an item another writer wrote, the way the library documents for items without its markers (if it has one). */
  getForeign?: (accountId: string, id: string) => Promise<ContactRecord | null>;
}

async function adapter(name: VariantName, ddb: DynamoDBDocumentClient, table: string): Promise<TxAdapter> {
  if (name === 'today') {
    const { createToday, transactWrite, contactItem } = await import('./variants/today.ts');
    const t = createToday(ddb, table);
    const requesterCheck = (c: ContactRecord, n: number) => ({
      item: {
        ConditionCheck: {
          TableName: table,
          Key: keys.requesterTickets(c.accountId, c.email),
          ConditionExpression: n === 0 ? 'attribute_not_exists(#c) OR #c = :n' : '#c = :n',
          ExpressionAttributeNames: { '#c': 'count' },
          ExpressionAttributeValues: { ':n': n },
        },
      },
      onConditionFailed: stale('Tickets for this contact changed meanwhile'),
    });
    return {
      create: (c, n, seen) => transactWrite(ddb, [t.contactPut(c), t.guardPut(c), t.counterWrite(c.accountId, 1), requesterCheck(c, n)], seen),
      replaceIfVersion: (c, v, seen) =>
        transactWrite(
          ddb,
          [
            {
              item: { Put: { TableName: table, Item: contactItem(c), ConditionExpression: 'version = :v', ExpressionAttributeValues: { ':v': v } } },
              onConditionFailed: stale('The contact was changed concurrently'),
            },
            t.counterWrite(c.accountId, 1),
          ],
          seen,
        ),
      getContact: (a, id) => t.variant.getContact(a, id),
      listByName: async (a) => (await t.variant.listByName(a, 25)).items,
    };
  }
  if (name === 'electrodb') {
    const { createElectro } = await import('./variants/electrodb.ts');
    const e = createElectro(ddb, table);
    type Any = any;
    return {
      create: (c, n, seen) =>
        e.transact(
          [
            { build: (x: Any) => x.contact.create(c).commit() },
            { build: (x: Any) => x.contactEmail.create({ ...keys.contactEmail(c.accountId, c.email), contactId: c.id, organizationId: c.organizationId }).commit(), onConditionFailed: exists(c) },
            { build: (x: Any) => x.listCounter.update(keys.listCounter(c.accountId, 'CONTACTS')).add({ n: 1 }).commit() },
            {
              build: (x: Any) =>
                x.requesterTickets
                  .check(keys.requesterTickets(c.accountId, c.email))
                  .where((a: Any, op: Any) => (n === 0 ? `${op.notExists(a.count)} OR ${op.eq(a.count, 0)}` : op.eq(a.count, n)))
                  .commit(),
              onConditionFailed: stale('Tickets for this contact changed meanwhile'),
            },
          ],
          seen,
        ),
      replaceIfVersion: (c, v, seen) =>
        e.transact(
          [
            {
              build: (x: Any) =>
                x.contact
                  .put(c)
                  .where((a: Any, op: Any) => op.eq(a.version, v))
                  .commit(),
              onConditionFailed: stale('The contact was changed concurrently'),
            },
            { build: (x: Any) => x.listCounter.update(keys.listCounter(c.accountId, 'CONTACTS')).add({ n: 1 }).commit() },
          ],
          seen,
        ),
      getContact: (a, id) => e.variant.getContact(a, id),
      listByName: async (a) => (await e.variant.listByName(a, 25)).items,
      getForeign: async (a, id) => ((await e.entities.contact.get({ accountId: a, id }).go({ ignoreOwnership: true })).data as ContactRecord | null) ?? null,
    };
  }
  const { createToolbox } = await import('./variants/toolbox.ts');
  const { ConditionCheck, PutTransaction, UpdateTransaction, $add } = await import('dynamodb-toolbox');
  const x = createToolbox(ddb, table);
  const { contact, contactEmail, listCounter, requesterTickets } = x.entities;
  return {
    create: (c, n, seen) =>
      x.transact(
        [
          {
            tx: contact
              .build(PutTransaction)
              .item(c)
              .options({ condition: { attr: 'id', exists: false } }),
          },
          {
            tx: contactEmail
              .build(PutTransaction)
              .item({ ...keys.contactEmail(c.accountId, c.email), contactId: c.id, organizationId: c.organizationId })
              .options({ condition: { attr: 'pk', exists: false } }),
            onConditionFailed: exists(c),
          },
          { tx: listCounter.build(UpdateTransaction).item({ ...keys.listCounter(c.accountId, 'CONTACTS'), n: $add(1) }) },
          {
            tx: requesterTickets
              .build(ConditionCheck)
              .key(keys.requesterTickets(c.accountId, c.email))
              .condition(
                n === 0
                  ? {
                      or: [
                        { attr: 'count', exists: false },
                        { attr: 'count', eq: 0 },
                      ],
                    }
                  : { attr: 'count', eq: n },
              ),
            onConditionFailed: stale('Tickets for this contact changed meanwhile'),
          },
        ],
        seen,
      ),
    replaceIfVersion: (c, v, seen) =>
      x.transact(
        [
          {
            tx: contact
              .build(PutTransaction)
              .item(c)
              .options({ condition: { attr: 'version', eq: v } }),
            onConditionFailed: stale('The contact was changed concurrently'),
          },
          { tx: listCounter.build(UpdateTransaction).item({ ...keys.listCounter(c.accountId, 'CONTACTS'), n: $add(1) }) },
        ],
        seen,
      ),
    getContact: (a, id) => x.variant.getContact(a, id),
    listByName: async (a) => (await x.variant.listByName(a, 25)).items,
  };
}

export interface ScenarioResult {
  scenario: string;
  expected: string;
  got: string;
  codes: string[];
  ok: boolean;
}

export interface Expressiveness {
  variant: VariantName;
  scenarios: ScenarioResult[];
  /** Nothing a cancelled transaction held was written: the counter moved once. */
  counterAfter: unknown;
  /** Attributes of its contact / guard / counter items that today's items do not have, or lack. */
  itemDiff: { contact: string[]; guard: string[]; counter: string[] };
  /** Reads a contact today's layer wrote: by key, in a gsi1 page, and (where the library has one) its documented way for items without its markers. */
  readsTodaysItems: { get: boolean; list: boolean; foreign?: boolean };
  error?: string;
}

const errorName = (err: unknown) => (err instanceof Error ? err.constructor.name : String(err));

async function check(name: VariantName, endpoint: string): Promise<Expressiveness> {
  const table = `expr_${name}_${process.pid}`;
  await createTable(endpoint, table);
  const ddb = documentClient(endpoint);
  const a = await adapter(name, ddb, table);
  const acc = 'acc_expr';
  const c1 = contactNo(acc, 1);
  const scenarios: ScenarioResult[] = [];
  const run = async (scenario: string, expected: string, fn: (seen: (codes: string[]) => void) => Promise<void>) => {
    let codes: string[] = [];
    let got = 'committed';
    try {
      await fn((c) => (codes = c));
    } catch (err) {
      got = errorName(err);
      if (!(err instanceof ConflictError) && !(err instanceof AlreadyExistsError)) got += `: ${(err as Error).message}`;
    }
    scenarios.push({ scenario, expected, got, codes, ok: got === expected });
  };
  await run('create: Put contact (absent) + Put guard (absent) + ADD counter + ConditionCheck count', 'committed', (s) => a.create(c1, 0, s));
  await run('same email, new contact: the guard Put (index 1) fails', 'AlreadyExistsError', (s) => a.create({ ...contactNo(acc, 2), email: c1.email }, 0, s));
  await run('requester count moved: the ConditionCheck (index 3) fails', 'StaleCountError', (s) => a.create(contactNo(acc, 3), 5, s));
  await run('same contact id again: the contact Put (index 0, no error of its own) fails', 'ConflictError', (s) => a.create({ ...c1, email: 'other@bench.example' }, 0, s));
  await run('stale version: Put on version = :v (index 0) fails', 'StaleCountError', (s) => a.replaceIfVersion({ ...c1, version: 8 }, 7, s));

  const raw = async (key: Record<string, string>) => (await ddb.send(new GetCommand({ TableName: table, Key: key }))).Item ?? {};
  const { contactItem } = await import('./variants/today.ts');
  const diff = (got: Record<string, unknown>, want: Record<string, unknown>) => {
    const out: string[] = [];
    for (const k of Object.keys(got)) if (!(k in want)) out.push(`+${k}`);
    for (const k of Object.keys(want)) if (!(k in got)) out.push(`-${k}`);
    for (const k of Object.keys(want)) if (k in got && JSON.stringify(got[k]) !== JSON.stringify(want[k])) out.push(`~${k}`);
    return out;
  };
  const counter = await raw(keys.listCounter(acc, 'CONTACTS'));
  const itemDiff = {
    contact: diff(await raw(keys.contact(acc, c1.id)), contactItem(c1)),
    guard: diff(await raw(keys.contactEmail(acc, c1.email)), { ...keys.contactEmail(acc, c1.email), type: 'contactEmail', contactId: c1.id, organizationId: c1.organizationId }),
    counter: diff(counter, { ...keys.listCounter(acc, 'CONTACTS'), n: 1 }),
  };

  // A contact as today's layer writes it, in an account of its own.
  const legacy = contactNo('acc_legacy', 4);
  await ddb.send(new PutCommand({ TableName: table, Item: contactItem(legacy) }));
  const got = await a.getContact(legacy.accountId, legacy.id).catch(() => null);
  const listed = await a.listByName(legacy.accountId).catch(() => []);
  const readsTodaysItems: Expressiveness['readsTodaysItems'] = { get: got?.id === legacy.id, list: listed.some((c) => c.id === legacy.id) };
  if (a.getForeign) readsTodaysItems.foreign = (await a.getForeign(legacy.accountId, legacy.id).catch(() => null))?.id === legacy.id;

  ddb.destroy();
  await deleteTable(endpoint, table);
  return { variant: name, scenarios, counterAfter: counter.n, itemDiff, readsTodaysItems };
}

export async function checkExpressiveness(endpoint: string, variants: readonly VariantName[]): Promise<Expressiveness[]> {
  const out: Expressiveness[] = [];
  for (const v of variants) {
    try {
      out.push(await check(v, endpoint));
    } catch (err) {
      out.push({
        variant: v,
        scenarios: [],
        counterAfter: undefined,
        itemDiff: { contact: [], guard: [], counter: [] },
        readsTodaysItems: { get: false, list: false },
        error: String((err as Error).stack ?? err),
      });
    }
  }
  return out;
}
