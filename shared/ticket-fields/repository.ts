import { bindEntity, conditions, type Condition } from '../db/entity.ts';
import { ticketFieldEntities } from '../db/entities/ticket-fields.ts';
import { batchDelete, batchGet, queryAll, queryPage, type Key } from '../db/query.ts';
import { mayHaveCommitted, transactWrite, writeNow, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, ConflictError, NotFoundError, RuleViolationError, ValidationError } from '../domain/errors.ts';
import { MAX_OPTIONS_PER_FIELD, OPTION_VALUE_MAX, type FieldType } from './limits.ts';
import { fieldsStampWrite } from './stamp.ts';

/** A custom ticket field as stored (`fieldType`, because `type` names the item kind in this table). */
export interface FieldRecord {
  id: string;
  accountId: string;
  title: string;
  fieldKey: string;
  fieldType: FieldType;
  description: string | null;
  position: number;
  active: boolean;
  requiredForAgents: boolean;
  requiredForEndUsers: boolean;
  visibleToEndUsers: boolean;
  editableByEndUsers: boolean;
  regexPattern: string | null;
  defaultValue: string | null;
  defaultOptionId: string | null;
  optionCount: number;
  createdAt: string;
  updatedAt: string;
  version: number;
}

export interface OptionRecord {
  id: string;
  accountId: string;
  fieldId: string;
  name: string;
  value: string;
  usageCount: number;
  createdAt: string;
}

/** Sort keys: position (gsi1, zero-padded so strings sort as numbers) and title (gsi2). */
const fields = bindEntity<FieldRecord>(ticketFieldEntities.ticketField, {
  fields: [
    'id',
    'accountId',
    'title',
    'fieldKey',
    'fieldType',
    'description',
    'position',
    'active',
    'requiredForAgents',
    'requiredForEndUsers',
    'visibleToEndUsers',
    'editableByEndUsers',
    'regexPattern',
    'defaultValue',
    'defaultOptionId',
    'optionCount',
    'createdAt',
    'updatedAt',
    'version',
  ],
  keyValues: (f) => ({ positionKey: String(f.position).padStart(10, '0') }),
});

const fieldKeys = bindEntity<{ accountId: string; fieldKey: string; fieldId: string }>(ticketFieldEntities.ticketFieldKey, { fields: ['fieldId'] });

const positionCounter = bindEntity<{ accountId: string; seq: number }>(ticketFieldEntities.fieldPositionCounter, { fields: ['seq'] });

const options = bindEntity<OptionRecord>(ticketFieldEntities.fieldOption, {
  fields: ['id', 'accountId', 'fieldId', 'name', 'value', 'usageCount', 'createdAt'],
  normalize: (o) => ({ ...o, usageCount: Number(o.usageCount ?? 0) }),
});

const optionValues = bindEntity<{ accountId: string; fieldId: string; value: string; optionId: string }>(ticketFieldEntities.fieldOptionValue, { fields: ['optionId'] });

const optionWrites = (o: OptionRecord): TxWrite[] => [
  options.put(o, conditions.absent()),
  optionValues.put(
    { accountId: o.accountId, fieldId: o.fieldId, value: o.value, optionId: o.id },
    conditions.absent(() => new RuleViolationError('DUPLICATE_OPTION_VALUE', `An option with value "${o.value}" already exists on this field`)),
  ),
];

/** A fieldKey is unique per account (409 CONFLICT when taken). */
export class FieldKeyTakenError extends AlreadyExistsError {}

/** Reserve the next default position for a custom field (gaps are harmless; ties break by id). */
export async function nextFieldPosition(accountId: string, first: number): Promise<number> {
  const out = await writeNow(positionCounter.updateAttributes({ accountId }, { add: { seq: 1 } }), { returnItem: true });
  return first + Number(out?.seq ?? 1) - 1;
}

/** Options per transaction when a field is created with inline options (100 items per transaction, 2 per option). */
const OPTIONS_PER_TX = 45;

/**
 * What commits with a field's create: with each transaction of options (the
 * first one also holds the field), and with the delete that undoes a create
 * whose later options failed (the field's audits).
 */
export interface FieldCreateRelated {
  withBatch(options: OptionRecord[], first: boolean): TxWrite[];
  withUndo(): TxWrite[];
  /** With the create's last transaction, the one that makes the field whole (the request's answer). */
  withLast?(): TxWrite[];
}

/**
 * Create a field, its fieldKey guard and its inline options. Up to 45 options
 * go in the field's own transaction; the rest follow in further transactions,
 * and the field is removed again if one of them fails, unless the last one
 * committed and only its answer was lost: then the field is whole.
 */
export async function createField(f: FieldRecord, opts: OptionRecord[], related?: FieldCreateRelated): Promise<void> {
  const batches = [opts.slice(0, OPTIONS_PER_TX)];
  for (let i = OPTIONS_PER_TX; i < opts.length; i += OPTIONS_PER_TX) batches.push(opts.slice(i, i + OPTIONS_PER_TX));
  const last = batches.length - 1;
  const lastWrites = (i: number) => (i === last ? (related?.withLast?.() ?? []) : []);
  await transactWrite([
    fields.put(f, conditions.absent()),
    fieldsStampWrite(f.accountId),
    fieldKeys.put(
      { accountId: f.accountId, fieldKey: f.fieldKey, fieldId: f.id },
      conditions.absent(() => new FieldKeyTakenError(`fieldKey "${f.fieldKey}" is already used by another field`)),
    ),
    ...batches[0].flatMap(optionWrites),
    ...(related?.withBatch(batches[0], true) ?? []),
    ...lastWrites(0),
  ]);
  for (let i = 1; i <= last; i++) {
    try {
      await transactWrite([...batches[i].flatMap(optionWrites), ...(related?.withBatch(batches[i], false) ?? []), ...lastWrites(i)]);
    } catch (err) {
      // Transactions are whole: the last one committed if its first option is there.
      const whole = i === last && mayHaveCommitted(err) && (await options.get({ accountId: f.accountId, fieldId: f.id, id: batches[i][0].id }, { consistent: true })) !== null;
      if (!whole) await deleteField(f, related?.withUndo() ?? []);
      throw err;
    }
  }
}

export async function getField(accountId: string, fieldId: string): Promise<FieldRecord | null> {
  return fields.get({ accountId, id: fieldId });
}

/** Every custom field of an account (the ticket validator's one Query); `consistent`: what every write so far committed. */
export async function listAllFields(accountId: string, opts: { consistent?: boolean } = {}): Promise<FieldRecord[]> {
  return (await queryAll<Record<string, unknown>>({ ...fields.query('byCreated', { accountId }), consistent: opts.consistent })).map(fields.fromItem);
}

export type FieldSort = 'position' | 'title' | 'created_at';

const SORT_PATTERN = { position: 'byPosition', title: 'byTitle', created_at: 'byCreated' } as const;

/** A page of custom fields in the requested order: base table (creation order), gsi1 (position) or gsi2 (title). */
export async function listFieldsPage(accountId: string, sort: FieldSort, forward: boolean, active: boolean | undefined, limit: number, startKey?: Key) {
  const filter = active === undefined ? undefined : { expr: '#active = :active', names: { '#active': 'active' }, values: { ':active': active } };
  const page = await queryPage<Record<string, unknown>>({ ...fields.query(SORT_PATTERN[sort], { accountId }, { forward, filter }), limit, startKey });
  return { fields: page.items.map(fields.fromItem), nextKey: page.nextKey };
}

export type FieldChanges = Partial<Omit<FieldRecord, 'id' | 'accountId' | 'fieldKey' | 'fieldType' | 'createdAt' | 'version' | 'optionCount'>> & { updatedAt: string };

/** Update a field with optimistic locking; `related` (its audit) commits with it. */
export async function updateField(current: FieldRecord, changes: FieldChanges, related: TxWrite[] = []): Promise<FieldRecord> {
  const next = { ...current, ...changes, version: current.version + 1 };
  const update = fields.update(
    current,
    next,
    conditions.version('version', current.version, () => new ConflictError('The resource was changed concurrently; retry the request')),
  );
  // The stamp moves with it (shared/ticket-fields/stamp.ts).
  await transactWrite([update, fieldsStampWrite(current.accountId), ...related]);
  return next;
}

/** Delete a field and its fieldKey guard atomically (with `related`: its audit), then clear its options (keyed under the gone field, so never visible). */
export async function deleteField(f: FieldRecord, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    fields.delete(
      f,
      conditions.present(() => new NotFoundError('Ticket field')),
    ),
    fieldKeys.delete(f),
    fieldsStampWrite(f.accountId),
    ...related,
  ]);
  const doomed = (await listOptions(f.accountId, f.id)).flatMap((o) => [options.key(o), optionValues.key(o)]);
  await batchDelete(doomed);
}

/** All options of a field, in creation order. */
export async function listOptions(accountId: string, fieldId: string): Promise<OptionRecord[]> {
  // The key of an empty id is the prefix every option of the field shares.
  const q = options.query('byField', { accountId }, { skBeginsWith: options.key({ accountId, fieldId, id: '' }).sk });
  return (await queryAll<Record<string, unknown>>(q)).map(options.fromItem);
}

export async function getOption(accountId: string, fieldId: string, optionId: string): Promise<OptionRecord | null> {
  return options.get({ accountId, fieldId, id: optionId });
}

/** Option ids for values of one field, via the value guards (one BatchGet per 100 values). Unknown values are absent. */
export async function optionIdsByValue(accountId: string, fieldId: string, values: string[]): Promise<Map<string, string>> {
  // A value longer than any option's cannot name one, and would exceed the store's sort key limit.
  const unique = [...new Set(values)].filter((v) => v.length <= OPTION_VALUE_MAX);
  const wanted = unique.map((value) => optionValues.key({ accountId, fieldId, value }));
  // A guard item stores only the option id: its value is the one its key was built from.
  const valueOf = new Map(wanted.map((k, n) => [k.sk, unique[n]]));
  const found = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += 100) for (const item of await batchGet(wanted.slice(i, i + 100))) found.set(valueOf.get(item.sk as string)!, item.optionId as string);
  return found;
}

const fieldGone = () => new NotFoundError('Ticket field');

/** Field update that counts an option in or out, capped at 2000, and optionally moves the default. */
function fieldOptionCountWrite(f: FieldRecord, delta: 1 | -1, defaultOptionId: string | null | undefined, now: string): TxWrite {
  const condition: Condition =
    delta > 0
      ? {
          expr: 'attribute_exists(pk) AND (attribute_not_exists(optionCount) OR optionCount < :max)',
          values: { ':max': MAX_OPTIONS_PER_FIELD },
          error: () => new RuleViolationError('TOO_MANY_OPTIONS', `A field has at most ${MAX_OPTIONS_PER_FIELD} options`),
        }
      : conditions.present(fieldGone);
  return fields.updateAttributes(f, { add: { optionCount: delta }, set: { updatedAt: now, ...(defaultOptionId !== undefined ? { defaultOptionId } : {}) } }, condition);
}

/** Add an option: the value guard and the field's capped counter commit with it (both exact under concurrency), and `related` (its audit). */
export async function createOption(f: FieldRecord, o: OptionRecord, makeDefault: boolean, related: TxWrite[] = []): Promise<void> {
  await transactWrite([fieldOptionCountWrite(f, 1, makeDefault ? o.id : undefined, o.createdAt), fieldsStampWrite(f.accountId), ...optionWrites(o), ...related]);
}

/**
 * Change an option. A new value moves the value guard, and is refused while
 * tickets use the option (they store the value). `related` (its audit) commits with it.
 */
export async function updateOption(
  f: FieldRecord,
  current: OptionRecord,
  changes: { name?: string; value?: string },
  defaultOptionId: string | null | undefined,
  now: string,
  related: TxWrite[] = [],
): Promise<OptionRecord> {
  const next = { ...current, ...changes };
  const valueMoves = changes.value !== undefined && changes.value !== current.value;
  const error = () => new RuleViolationError('OPTION_IN_USE', 'The option is used on tickets; its value cannot change');
  const writes: TxWrite[] = [
    options.updateAttributes(
      current,
      { set: { name: next.name, value: next.value } },
      valueMoves ? { expr: 'attribute_exists(pk) AND usageCount = :zero', values: { ':zero': 0 }, error } : conditions.present(error),
    ),
  ];
  if (next.value !== current.value) writes.push(optionValues.delete(current), optionWrites(next)[1]);
  if (defaultOptionId !== undefined) writes.push(fields.updateAttributes(f, { set: { defaultOptionId, updatedAt: now } }, conditions.present()));
  await transactWrite([...writes, fieldsStampWrite(f.accountId), ...related]);
  return next;
}

/** Delete an option unless a ticket uses it (the usage count is kept with every ticket write); `related` (its audit) commits with it. */
export async function deleteOption(f: FieldRecord, o: OptionRecord, now: string, related: TxWrite[] = []): Promise<void> {
  await transactWrite([
    options.delete(o, {
      expr: 'attribute_exists(pk) AND (attribute_not_exists(usageCount) OR usageCount = :zero)',
      values: { ':zero': 0 },
      error: () => new RuleViolationError('OPTION_IN_USE', 'The option is used on tickets and cannot be deleted'),
    }),
    optionValues.delete(o),
    fieldOptionCountWrite(f, -1, f.defaultOptionId === o.id ? null : undefined, now),
    fieldsStampWrite(f.accountId),
    ...related,
  ]);
}

/** The write that counts a ticket's use of an option in (+1) or out (-1), inside the ticket's transaction. */
export function optionUsageWrite(accountId: string, fieldId: string, optionId: string, delta: number): TxWrite {
  return options.updateAttributes(
    { accountId, fieldId, id: optionId },
    { add: { usageCount: delta } },
    conditions.present(() => new ValidationError('An option used by the ticket was deleted meanwhile; retry', [{ field: 'customFields', message: 'option no longer exists' }])),
  );
}
