import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { flushAuthorizerCache } from '../auth/authorizer-cache.ts';
import type { Principal } from '../auth/principal.ts';
import type { TxWrite } from '../db/transact.ts';
import { NotFoundError, RuleViolationError, ValidationError } from '../domain/errors.ts';
import { createAnswerWrites, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import { decodeCursor, encodeCursor } from '../pagination/cursor.ts';
import { MAX_OPTIONS_PER_FIELD, OPTION_TYPES } from './limits.ts';
import type { CreateTicketFieldInput, ListTicketFieldsQuery, OptionDto, TicketFieldDto, UpdateOptionInput, UpdateTicketFieldInput } from './model.ts';
import { compilePattern, loadPatterns } from './pattern.ts';
import * as repo from './repository.ts';
import type { FieldRecord, OptionRecord } from './repository.ts';
import { FIRST_CUSTOM_POSITION, isSystemFieldId, SYSTEM_FIELDS, systemField } from './system-fields.ts';

export function toOptionDto(o: OptionRecord, defaultOptionId: string | null): OptionDto {
  return { id: o.id, name: o.name, value: o.value, default: o.id === defaultOptionId };
}

export function toFieldDto(f: FieldRecord, options: OptionRecord[] | null): TicketFieldDto {
  return {
    id: f.id,
    title: f.title,
    fieldKey: f.fieldKey,
    type: f.fieldType,
    description: f.description,
    position: f.position,
    active: f.active,
    requiredForAgents: f.requiredForAgents,
    requiredForEndUsers: f.requiredForEndUsers,
    visibleToEndUsers: f.visibleToEndUsers,
    editableByEndUsers: f.editableByEndUsers,
    regexPattern: f.regexPattern,
    defaultValue: f.defaultValue,
    options: options ? options.map((o) => toOptionDto(o, f.defaultOptionId)) : null,
    createdAt: f.createdAt,
    updatedAt: f.updatedAt,
  };
}

const hasOptions = (f: Pick<FieldRecord, 'fieldType'>) => OPTION_TYPES.includes(f.fieldType);

/**
 * A write of a field or its options moves the account's fields stamp (repository), and then the authorizer cache is
 * flushed, so the next request carries the new stamp and no function keeps the old definitions (stamp.ts). Flushed
 * whether the write answered or not: one that failed after it committed is seen at once too.
 */
const seenAtOnce = <T>(write: Promise<T>): Promise<T> => write.finally(() => flushAuthorizerCache());

async function withOptions(f: FieldRecord): Promise<TicketFieldDto> {
  return toFieldDto(f, hasOptions(f) ? await repo.listOptions(f.accountId, f.id) : null);
}

async function requireCustomField(p: Principal, id: string): Promise<FieldRecord> {
  const f = await repo.getField(p.accountId, id);
  if (!f) throw new NotFoundError('Ticket field');
  return f;
}

const systemFieldError = () => new RuleViolationError('SYSTEM_FIELD', 'System fields cannot be modified or deleted');

/*
 * Audits (decisions §15), resource `ticket_field`: the field's settings as the
 * API names them, and each option as `options.<optionId>` with its name, value
 * and whether it is the default (null: no such option).
 */
const AUDITED = [
  'title',
  'fieldKey',
  'type',
  'description',
  'position',
  'active',
  'requiredForAgents',
  'requiredForEndUsers',
  'visibleToEndUsers',
  'editableByEndUsers',
  'regexPattern',
  'defaultValue',
] as const;

const auditedField = ({ fieldType, ...f }: FieldRecord) => ({ ...f, type: fieldType });

const optionView = (o: OptionRecord | null, defaultOptionId: string | null) => (o ? { name: o.name, value: o.value, default: o.id === defaultOptionId } : null);

/** An option's change, or none when it did not change. */
const optionChange = (id: string, from: ReturnType<typeof optionView>, to: ReturnType<typeof optionView>): AuditChange[] =>
  diffFields({ [`options.${id}`]: from }, { [`options.${id}`]: to }, [`options.${id}`]);

const fieldAudit = (p: Principal, fieldId: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}): TxWrite =>
  auditWrite({ accountId: p.accountId, resource: { type: 'ticket_field', id: fieldId }, actor: userActor(p), via: 'api', changes, ...opts });

/** The field's audit of a change, or none when nothing audited changed. */
const changeAudits = (p: Principal, fieldId: string, changes: AuditChange[], at: string): TxWrite[] => (changes.length ? [fieldAudit(p, fieldId, changes, { at })] : []);

/**
 * The former default option losing its flag when another becomes the
 * default (read, so its audit shows it whole); none when there was none.
 */
async function formerDefaultChange(p: Principal, f: FieldRecord, newDefaultId: string): Promise<AuditChange[]> {
  if (!f.defaultOptionId || f.defaultOptionId === newDefaultId) return [];
  const former = await repo.getOption(p.accountId, f.id, f.defaultOptionId);
  return former ? optionChange(former.id, optionView(former, former.id), optionView(former, newDefaultId)) : [];
}

export async function getField(p: Principal, id: string): Promise<TicketFieldDto> {
  if (isSystemFieldId(id)) {
    const f = systemField(id);
    if (!f) throw new NotFoundError('Ticket field');
    return f;
  }
  return withOptions(await requireCustomField(p, id));
}

interface FieldCursorQuery {
  active?: boolean;
  sort_by: repo.FieldSort;
  sort_order: 'asc' | 'desc';
  /** System fields already returned. */
  system: number;
}

const LIST = 'ticketFields';

/**
 * One page of ticket fields: the system fields first (on the first page, in
 * position order), then custom fields in the requested order.
 */
export async function listFields(p: Principal, q: ListTicketFieldsQuery) {
  let state: FieldCursorQuery;
  let startKey: Record<string, string> | undefined;
  if (q.after) {
    const c = await decodeCursor<FieldCursorQuery>(q.after, LIST, p.accountId);
    state = c.query;
    startKey = Object.keys(c.key).length ? c.key : undefined;
  } else state = { active: q.active, sort_by: q.sort_by, sort_order: q.sort_order, system: 0 };

  const systems = state.active === false ? [] : SYSTEM_FIELDS.slice(state.system, state.system + q.page_size);
  const room = q.page_size - systems.length;
  let custom: TicketFieldDto[] = [];
  let nextKey: Record<string, string> | undefined;
  let hasMore: boolean;
  if (room > 0) {
    const page = await repo.listFieldsPage(p.accountId, state.sort_by, state.sort_order === 'asc', state.active, room, startKey);
    custom = await Promise.all(page.fields.map(withOptions));
    nextKey = page.nextKey;
    hasMore = Boolean(page.nextKey);
  } else {
    // The page is full of system fields; whatever follows (more system fields or any custom field) is the next page.
    hasMore = state.system + systems.length < SYSTEM_FIELDS.length || (await repo.listFieldsPage(p.accountId, state.sort_by, true, state.active, 1)).fields.length > 0;
  }
  const next = hasMore ? await encodeCursor({ list: LIST, accountId: p.accountId, query: { ...state, system: state.system + systems.length }, key: nextKey ?? {} }) : null;
  return { fields: [...systems, ...custom], next };
}

function slugKey(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (/^[a-z]/.test(slug) ? slug : `field_${slug}`).slice(0, 64) || 'field';
}

function checkOptionsInput(type: FieldRecord['fieldType'], options: { value: string; default: boolean }[] | undefined) {
  // An empty list on a field without options says nothing: only options actually given are refused there.
  if (!options || (!options.length && !OPTION_TYPES.includes(type))) return;
  if (!OPTION_TYPES.includes(type)) throw new RuleViolationError('INVALID_FIELD_TYPE', `Options are only for dropdown and multiselect fields, not ${type}`);
  if (options.length > MAX_OPTIONS_PER_FIELD) throw new RuleViolationError('TOO_MANY_OPTIONS', `A field has at most ${MAX_OPTIONS_PER_FIELD} options`);
  const seen = new Set<string>();
  for (const o of options) {
    if (seen.has(o.value)) throw new RuleViolationError('DUPLICATE_OPTION_VALUE', `Option value "${o.value}" appears twice`);
    seen.add(o.value);
  }
  if (options.filter((o) => o.default).length > 1) throw new ValidationError('At most one option can be the default', [{ field: 'options', message: 'more than one default' }]);
}

async function checkRegex(type: FieldRecord['fieldType'], pattern: string | null | undefined) {
  if (type === 'regex' && !pattern) throw new ValidationError('A regex field needs a regexPattern', [{ field: 'regexPattern', message: 'required for regex fields' }]);
  if (type !== 'regex' && pattern) throw new ValidationError('regexPattern applies only to regex fields', [{ field: 'regexPattern', message: 'only for regex fields' }]);
  if (!pattern) return;
  // Here rather than in the body schema: RE2 loads on first use (pattern.ts), and a schema check must be synchronous.
  await loadPatterns();
  if (compilePattern(pattern) === null) {
    const message = 'must be a valid RE2 regular expression (no backreferences or lookaround; repeat counts at most 1000)';
    throw new ValidationError(`Invalid request: regexPattern: ${message}`, [{ field: 'regexPattern', message }]);
  }
}

export async function createField(p: Principal, input: CreateTicketFieldInput, opts: CreateAnswer<TicketFieldDto> = {}): Promise<TicketFieldDto> {
  checkOptionsInput(input.type, input.options);
  await checkRegex(input.type, input.regexPattern);
  const now = new Date().toISOString();
  const id = newId('fld');
  const options: OptionRecord[] = (input.options ?? []).map((o) => ({ id: newId('opt'), accountId: p.accountId, fieldId: id, name: o.name, value: o.value, usageCount: 0, createdAt: now }));
  const field: FieldRecord = {
    id,
    accountId: p.accountId,
    title: input.title,
    fieldKey: input.fieldKey ?? slugKey(input.title),
    fieldType: input.type,
    description: input.description ?? null,
    position: input.position ?? (await repo.nextFieldPosition(p.accountId, FIRST_CUSTOM_POSITION)),
    active: input.active ?? true,
    requiredForAgents: input.requiredForAgents ?? false,
    requiredForEndUsers: input.requiredForEndUsers ?? false,
    visibleToEndUsers: input.visibleToEndUsers ?? true,
    editableByEndUsers: input.editableByEndUsers ?? true,
    regexPattern: input.regexPattern ?? null,
    defaultValue: input.defaultValue ?? null,
    defaultOptionId: options.find((_, i) => input.options![i].default)?.id ?? null,
    optionCount: options.length,
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  // One audit per transaction of the create: the field's settings with its first options, then each further batch of options.
  const related: repo.FieldCreateRelated = {
    withBatch: (batch, first) => [
      fieldAudit(p, id, [...(first ? diffFields(null, auditedField(field), AUDITED) : []), ...batch.flatMap((o) => optionChange(o.id, null, optionView(o, field.defaultOptionId)))], {
        at: now,
      }),
    ],
    withUndo: () => [fieldAudit(p, id, [], { deleted: true })],
    // A commit whose answer is lost must not let the client's retry with its key answer 409 for the field's own key
    // (or make it again under another): the key holds the answer from the create's last transaction
    // (docs/decisions.md "Ambiguous writes"). Built when sent, with the fieldKey of that attempt.
    withLast: () => createAnswerWrites(opts, created()),
  };
  const created = () => toFieldDto(field, hasOptions(field) ? options : null);
  // A key made from the title gets a numeric suffix when another field already has it; a given key must be free (409).
  // One flush for the whole create: an attempt refused for its key wrote nothing.
  await seenAtOnce(
    (async () => {
      for (let n = 2; ; n++) {
        try {
          await repo.createField(field, options, related);
          return;
        } catch (err) {
          if (!(err instanceof repo.FieldKeyTakenError) || input.fieldKey !== undefined || n > 50) throw err;
          field.fieldKey = `${slugKey(input.title).slice(0, 60)}_${n}`;
        }
      }
    })(),
  );
  return created();
}

export async function updateField(p: Principal, id: string, input: UpdateTicketFieldInput): Promise<TicketFieldDto> {
  if (isSystemFieldId(id)) {
    if (!systemField(id)) throw new NotFoundError('Ticket field');
    throw systemFieldError();
  }
  const current = await requireCustomField(p, id);
  if (input.type !== undefined && input.type !== current.fieldType) throw new RuleViolationError('IMMUTABLE_FIELD', 'type cannot change after creation');
  if (input.fieldKey !== undefined && input.fieldKey !== current.fieldKey) throw new RuleViolationError('IMMUTABLE_FIELD', 'fieldKey cannot change after creation');
  if (input.regexPattern !== undefined) await checkRegex(current.fieldType, input.regexPattern ?? (current.fieldType === 'regex' ? null : undefined));
  const { type: _t, fieldKey: _k, ...rest } = input;
  const changes: repo.FieldChanges = { updatedAt: new Date().toISOString() };
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) (changes as Record<string, unknown>)[k] = v;
  if (Object.keys(changes).length === 1) return withOptions(current);
  // The same values given again still write (as ever) but record no audit: nothing changed.
  const audited = diffFields(auditedField(current), auditedField({ ...current, ...changes }), AUDITED);
  return withOptions(await seenAtOnce(repo.updateField(current, changes, changeAudits(p, id, audited, changes.updatedAt))));
}

export async function deleteField(p: Principal, id: string): Promise<void> {
  if (isSystemFieldId(id)) {
    if (!systemField(id)) throw new NotFoundError('Ticket field');
    throw systemFieldError();
  }
  await seenAtOnce(repo.deleteField(await requireCustomField(p, id), [fieldAudit(p, id, [], { deleted: true })]));
}

/** The field an option call addresses; system fields answer reads, refuse writes. */
async function optionField(p: Principal, fieldId: string, write: boolean): Promise<FieldRecord | TicketFieldDto> {
  if (isSystemFieldId(fieldId)) {
    const f = systemField(fieldId);
    if (!f) throw new NotFoundError('Ticket field');
    if (write) throw systemFieldError();
    if (!f.options) throw new RuleViolationError('INVALID_FIELD_TYPE', `Field ${fieldId} has no options`);
    return f;
  }
  const f = await requireCustomField(p, fieldId);
  if (!hasOptions(f)) throw new RuleViolationError('INVALID_FIELD_TYPE', `Options are only for dropdown and multiselect fields, not ${f.fieldType}`);
  return f;
}

const isSystem = (f: FieldRecord | TicketFieldDto): f is TicketFieldDto => 'options' in f;

export async function listOptions(p: Principal, fieldId: string): Promise<OptionDto[]> {
  const f = await optionField(p, fieldId, false);
  if (isSystem(f)) return f.options ?? [];
  return (await repo.listOptions(p.accountId, f.id)).map((o) => toOptionDto(o, f.defaultOptionId));
}

export async function getOption(p: Principal, fieldId: string, optionId: string): Promise<OptionDto> {
  const f = await optionField(p, fieldId, false);
  if (isSystem(f)) {
    const o = f.options?.find((x) => x.id === optionId);
    if (!o) throw new NotFoundError('Option');
    return o;
  }
  const o = await repo.getOption(p.accountId, f.id, optionId);
  if (!o) throw new NotFoundError('Option');
  return toOptionDto(o, f.defaultOptionId);
}

export async function createOption(p: Principal, fieldId: string, input: { name: string; value: string; default: boolean }, opts: CreateAnswer<OptionDto> = {}): Promise<OptionDto> {
  const f = (await optionField(p, fieldId, true)) as FieldRecord;
  const now = new Date().toISOString();
  const o: OptionRecord = { id: newId('opt'), accountId: p.accountId, fieldId: f.id, name: input.name, value: input.value, usageCount: 0, createdAt: now };
  const defaultId = input.default ? o.id : f.defaultOptionId;
  const changes = [...optionChange(o.id, null, optionView(o, defaultId)), ...(input.default ? await formerDefaultChange(p, f, o.id) : [])];
  const created = toOptionDto(o, input.default ? o.id : f.defaultOptionId);
  // Its answer commits with it: a retry with the key after a lost answer is not a 409 for its own value.
  await seenAtOnce(repo.createOption(f, o, input.default, [...changeAudits(p, f.id, changes, now), ...createAnswerWrites(opts, created)]));
  return created;
}

export async function updateOption(p: Principal, fieldId: string, optionId: string, input: UpdateOptionInput): Promise<OptionDto> {
  const f = (await optionField(p, fieldId, true)) as FieldRecord;
  const current = await repo.getOption(p.accountId, f.id, optionId);
  if (!current) throw new NotFoundError('Option');
  const newDefault = input.default === true ? optionId : input.default === false && f.defaultOptionId === optionId ? null : undefined;
  const changes = Object.fromEntries(Object.entries({ name: input.name, value: input.value }).filter(([, v]) => v !== undefined));
  const now = new Date().toISOString();
  const audited = [
    ...optionChange(optionId, optionView(current, f.defaultOptionId), optionView({ ...current, ...changes }, newDefault !== undefined ? newDefault : f.defaultOptionId)),
    ...(newDefault === optionId ? await formerDefaultChange(p, f, optionId) : []),
  ];
  const updated = await seenAtOnce(repo.updateOption(f, current, changes, newDefault, now, changeAudits(p, f.id, audited, now)));
  return toOptionDto(updated, newDefault !== undefined ? newDefault : f.defaultOptionId);
}

export async function deleteOption(p: Principal, fieldId: string, optionId: string): Promise<void> {
  const f = (await optionField(p, fieldId, true)) as FieldRecord;
  const o = await repo.getOption(p.accountId, f.id, optionId);
  if (!o) throw new NotFoundError('Option');
  const now = new Date().toISOString();
  await seenAtOnce(repo.deleteOption(f, o, now, changeAudits(p, f.id, optionChange(o.id, optionView(o, f.defaultOptionId), null), now)));
}
