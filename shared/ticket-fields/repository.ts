import { BatchGetCommand, BatchWriteCommand, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ddb, tableName } from '../db/client.ts';
import { keys, textSortKey } from '../db/keys.ts';
import { queryAll, queryPage, type Key } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { AlreadyExistsError, NotFoundError, RuleViolationError, ValidationError } from '../domain/errors.ts';
import { MAX_OPTIONS_PER_FIELD, OPTION_VALUE_MAX, type FieldType } from './limits.ts';

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

const FIELD_ATTRS: (keyof FieldRecord)[] = [
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
];
const toField = (i: Record<string, unknown>) => Object.fromEntries(FIELD_ATTRS.map((a) => [a, i[a] ?? null])) as unknown as FieldRecord;
const toOption = (i: Record<string, unknown>): OptionRecord => ({
  id: i.id as string,
  accountId: i.accountId as string,
  fieldId: i.fieldId as string,
  name: i.name as string,
  value: i.value as string,
  usageCount: Number(i.usageCount ?? 0),
  createdAt: i.createdAt as string,
});

/** Sort keys: position (gsi1, zero-padded so strings sort as numbers) and title (gsi2). */
const fieldIndexAttributes = (f: Pick<FieldRecord, 'accountId' | 'id' | 'position' | 'title'>) => ({
  gsi1pk: keys.ticketFieldsIndex(f.accountId),
  gsi1sk: `${String(f.position).padStart(10, '0')}#${f.id}`,
  gsi2pk: keys.ticketFieldsIndex(f.accountId),
  gsi2sk: textSortKey(f.title, f.id),
});

const optionWrites = (o: OptionRecord): TxWrite[] => [
  { item: { Put: { TableName: tableName(), Item: { ...keys.option(o.accountId, o.fieldId, o.id), type: 'fieldOption', ...o }, ConditionExpression: 'attribute_not_exists(pk)' } } },
  {
    item: {
      Put: { TableName: tableName(), Item: { ...keys.optionValue(o.accountId, o.fieldId, o.value), type: 'fieldOptionValue', optionId: o.id }, ConditionExpression: 'attribute_not_exists(pk)' },
    },
    onConditionFailed: () => new RuleViolationError('DUPLICATE_OPTION_VALUE', `An option with value "${o.value}" already exists on this field`),
  },
];

/** A fieldKey is unique per account (409 CONFLICT when taken). */
export class FieldKeyTakenError extends AlreadyExistsError {}

/** Reserve the next default position for a custom field (gaps are harmless; ties break by id). */
export async function nextFieldPosition(accountId: string, first: number): Promise<number> {
  const out = await ddb.send(
    new UpdateCommand({ TableName: tableName(), Key: keys.fieldPositionCounter(accountId), UpdateExpression: 'ADD seq :one', ExpressionAttributeValues: { ':one': 1 }, ReturnValues: 'UPDATED_NEW' }),
  );
  return first + Number(out.Attributes?.seq ?? 1) - 1;
}

/** Options per transaction when a field is created with inline options (100 items per transaction, 2 per option). */
const OPTIONS_PER_TX = 45;

/**
 * Create a field, its fieldKey guard and its inline options. Up to 45 options
 * go in the field's own transaction; the rest follow in further transactions,
 * and the field is removed again if one of them fails.
 */
export async function createField(f: FieldRecord, options: OptionRecord[]): Promise<void> {
  const first = options.slice(0, OPTIONS_PER_TX);
  await transactWrite([
    {
      item: {
        Put: { TableName: tableName(), Item: { ...keys.ticketField(f.accountId, f.id), type: 'ticketField', ...f, ...fieldIndexAttributes(f) }, ConditionExpression: 'attribute_not_exists(pk)' },
      },
    },
    {
      item: { Put: { TableName: tableName(), Item: { ...keys.ticketFieldKey(f.accountId, f.fieldKey), type: 'ticketFieldKey', fieldId: f.id }, ConditionExpression: 'attribute_not_exists(pk)' } },
      onConditionFailed: () => new FieldKeyTakenError(`fieldKey "${f.fieldKey}" is already used by another field`),
    },
    ...first.flatMap(optionWrites),
  ]);
  try {
    for (let i = OPTIONS_PER_TX; i < options.length; i += OPTIONS_PER_TX) await transactWrite(options.slice(i, i + OPTIONS_PER_TX).flatMap(optionWrites));
  } catch (err) {
    await deleteField(f);
    throw err;
  }
}

export async function getField(accountId: string, fieldId: string): Promise<FieldRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.ticketField(accountId, fieldId) }));
  return out.Item ? toField(out.Item) : null;
}

/** Every custom field of an account (the ticket validator's one Query). */
export async function listAllFields(accountId: string): Promise<FieldRecord[]> {
  const items = await queryAll<Record<string, unknown>>({
    keyCondition: 'pk = :pk AND begins_with(sk, :p)',
    values: { ':pk': keys.accountPk(accountId), ':p': keys.ticketFieldPrefix },
    names: {},
    forward: true,
  });
  return items.map(toField);
}

export type FieldSort = 'position' | 'title' | 'created_at';

/** A page of custom fields in the requested order: base table (creation order), gsi1 (position) or gsi2 (title). */
export async function listFieldsPage(accountId: string, sort: FieldSort, forward: boolean, active: boolean | undefined, limit: number, startKey?: Key) {
  const filter = active === undefined ? {} : { filter: '#active = :active', names: { '#active': 'active' }, values: { ':active': active } };
  const q =
    sort === 'created_at'
      ? { keyCondition: 'pk = :pk AND begins_with(sk, :p)', values: { ':pk': keys.accountPk(accountId), ':p': keys.ticketFieldPrefix } }
      : { index: sort === 'position' ? ('gsi1' as const) : ('gsi2' as const), keyCondition: `${sort === 'position' ? 'gsi1' : 'gsi2'}pk = :pk`, values: { ':pk': keys.ticketFieldsIndex(accountId) } };
  const page = await queryPage<Record<string, unknown>>({ ...q, filter: filter.filter, names: filter.names ?? {}, values: { ...q.values, ...filter.values }, forward, limit, startKey });
  return { fields: page.items.map(toField), nextKey: page.nextKey };
}

export type FieldChanges = Partial<Omit<FieldRecord, 'id' | 'accountId' | 'fieldKey' | 'fieldType' | 'createdAt' | 'version' | 'optionCount'>> & { updatedAt: string };

/** Update a field with optimistic locking. */
export async function updateField(current: FieldRecord, changes: FieldChanges): Promise<FieldRecord> {
  const next = { ...current, ...changes, version: current.version + 1 };
  const set: Record<string, unknown> = { ...changes, ...fieldIndexAttributes(next), version: next.version };
  await transactWrite([
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.ticketField(current.accountId, current.id),
          UpdateExpression: `SET ${Object.keys(set)
            .map((k) => `#${k} = :${k}`)
            .join(', ')}`,
          ConditionExpression: '#version = :expected',
          ExpressionAttributeNames: Object.fromEntries(Object.keys(set).map((k) => [`#${k}`, k])),
          ExpressionAttributeValues: { ...Object.fromEntries(Object.entries(set).map(([k, v]) => [`:${k}`, v])), ':expected': current.version },
        },
      },
    },
  ]);
  return next;
}

/** Delete a field and its fieldKey guard atomically, then clear its options (keyed under the gone field, so never visible). */
export async function deleteField(f: FieldRecord): Promise<void> {
  await transactWrite([
    { item: { Delete: { TableName: tableName(), Key: keys.ticketField(f.accountId, f.id), ConditionExpression: 'attribute_exists(pk)' } }, onConditionFailed: () => new NotFoundError('Ticket field') },
    { item: { Delete: { TableName: tableName(), Key: keys.ticketFieldKey(f.accountId, f.fieldKey) } } },
  ]);
  const options = await listOptions(f.accountId, f.id);
  const doomed = options.flatMap((o) => [keys.option(f.accountId, f.id, o.id), keys.optionValue(f.accountId, f.id, o.value)]);
  for (let i = 0; i < doomed.length; i += 25) {
    let requests: Record<string, unknown>[] | undefined = doomed.slice(i, i + 25).map((Key) => ({ DeleteRequest: { Key } }));
    while (requests?.length) {
      const out = await ddb.send(new BatchWriteCommand({ RequestItems: { [tableName()]: requests } }));
      requests = out.UnprocessedItems?.[tableName()] as Record<string, unknown>[] | undefined;
    }
  }
}

/** All options of a field, in creation order. */
export async function listOptions(accountId: string, fieldId: string): Promise<OptionRecord[]> {
  const options: OptionRecord[] = [];
  let startKey: Key | undefined;
  do {
    const out = await ddb.send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :p)',
        ExpressionAttributeValues: { ':pk': keys.accountPk(accountId), ':p': keys.optionPrefix(fieldId) },
        ExclusiveStartKey: startKey,
      }),
    );
    options.push(...(out.Items ?? []).map(toOption));
    startKey = out.LastEvaluatedKey as Key | undefined;
  } while (startKey);
  return options;
}

export async function getOption(accountId: string, fieldId: string, optionId: string): Promise<OptionRecord | null> {
  const out = await ddb.send(new GetCommand({ TableName: tableName(), Key: keys.option(accountId, fieldId, optionId) }));
  return out.Item ? toOption(out.Item) : null;
}

/** Option ids for values of one field, via the value guards (one BatchGet per 100 values). Unknown values are absent. */
export async function optionIdsByValue(accountId: string, fieldId: string, values: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  // A value longer than any option's cannot name one, and would exceed the store's sort key limit.
  const unique = [...new Set(values)].filter((v) => v.length <= OPTION_VALUE_MAX);
  for (let i = 0; i < unique.length; i += 100) {
    let requestKeys: Record<string, unknown>[] | undefined = unique.slice(i, i + 100).map((v) => keys.optionValue(accountId, fieldId, v));
    while (requestKeys?.length) {
      const out = await ddb.send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: requestKeys } } }));
      for (const item of out.Responses?.[tableName()] ?? []) found.set((item.sk as string).slice(keys.optionValue(accountId, fieldId, '').sk.length), item.optionId as string);
      requestKeys = out.UnprocessedKeys?.[tableName()]?.Keys as Record<string, unknown>[] | undefined;
    }
  }
  return found;
}

/** Field update that counts an option in or out, capped at 2000, and optionally moves the default. */
function fieldOptionCountWrite(f: FieldRecord, delta: 1 | -1, defaultOptionId: string | null | undefined, now: string): TxWrite {
  const setDefault = defaultOptionId !== undefined;
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.ticketField(f.accountId, f.id),
        UpdateExpression: `ADD optionCount :delta SET updatedAt = :now${setDefault ? ', defaultOptionId = :def' : ''}`,
        ConditionExpression: delta > 0 ? 'attribute_exists(pk) AND (attribute_not_exists(optionCount) OR optionCount < :max)' : 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':delta': delta, ':now': now, ...(delta > 0 ? { ':max': MAX_OPTIONS_PER_FIELD } : {}), ...(setDefault ? { ':def': defaultOptionId } : {}) },
      },
    },
    onConditionFailed: () => (delta > 0 ? new RuleViolationError('TOO_MANY_OPTIONS', `A field has at most ${MAX_OPTIONS_PER_FIELD} options`) : new NotFoundError('Ticket field')),
  };
}

/** Add an option: the value guard and the field's capped counter commit with it (both exact under concurrency). */
export async function createOption(f: FieldRecord, o: OptionRecord, makeDefault: boolean): Promise<void> {
  await transactWrite([fieldOptionCountWrite(f, 1, makeDefault ? o.id : undefined, o.createdAt), ...optionWrites(o)]);
}

/**
 * Change an option. A new value moves the value guard, and is refused while
 * tickets use the option (they store the value).
 */
export async function updateOption(f: FieldRecord, current: OptionRecord, changes: { name?: string; value?: string }, defaultOptionId: string | null | undefined, now: string): Promise<OptionRecord> {
  const next = { ...current, ...changes };
  const writes: TxWrite[] = [
    {
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.option(f.accountId, f.id, current.id),
          UpdateExpression: 'SET #name = :name, #value = :value',
          ConditionExpression: changes.value !== undefined && changes.value !== current.value ? 'attribute_exists(pk) AND usageCount = :zero' : 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#name': 'name', '#value': 'value' },
          ExpressionAttributeValues: { ':name': next.name, ':value': next.value, ...(changes.value !== undefined && changes.value !== current.value ? { ':zero': 0 } : {}) },
        },
      },
      onConditionFailed: () => new RuleViolationError('OPTION_IN_USE', 'The option is used on tickets; its value cannot change'),
    },
  ];
  if (next.value !== current.value) {
    writes.push({ item: { Delete: { TableName: tableName(), Key: keys.optionValue(f.accountId, f.id, current.value) } } });
    writes.push(optionWrites(next)[1]);
  }
  if (defaultOptionId !== undefined) {
    writes.push({
      item: {
        Update: {
          TableName: tableName(),
          Key: keys.ticketField(f.accountId, f.id),
          UpdateExpression: 'SET defaultOptionId = :d, updatedAt = :now',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':d': defaultOptionId, ':now': now },
        },
      },
    });
  }
  await transactWrite(writes);
  return next;
}

/** Delete an option unless a ticket uses it (the usage count is kept with every ticket write). */
export async function deleteOption(f: FieldRecord, o: OptionRecord, now: string): Promise<void> {
  await transactWrite([
    {
      item: {
        Delete: {
          TableName: tableName(),
          Key: keys.option(f.accountId, f.id, o.id),
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(usageCount) OR usageCount = :zero)',
          ExpressionAttributeValues: { ':zero': 0 },
        },
      },
      onConditionFailed: () => new RuleViolationError('OPTION_IN_USE', 'The option is used on tickets and cannot be deleted'),
    },
    { item: { Delete: { TableName: tableName(), Key: keys.optionValue(f.accountId, f.id, o.value) } } },
    fieldOptionCountWrite(f, -1, f.defaultOptionId === o.id ? null : undefined, now),
  ]);
}

/** The write that counts a ticket's use of an option in (+1) or out (-1), inside the ticket's transaction. */
export function optionUsageWrite(accountId: string, fieldId: string, optionId: string, delta: number): TxWrite {
  return {
    item: {
      Update: {
        TableName: tableName(),
        Key: keys.option(accountId, fieldId, optionId),
        UpdateExpression: 'ADD usageCount :d',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':d': delta },
      },
    },
    onConditionFailed: () => new ValidationError('An option used by the ticket was deleted meanwhile; retry', [{ field: 'customFields', message: 'option no longer exists' }]),
  };
}
