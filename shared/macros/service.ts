import type { AuditChange } from '../audits/model.ts';
import { auditWrite, diffFields, userActor } from '../audits/service.ts';
import { hasDeskRole, type Principal } from '../auth/principal.ts';
import { retryOnConflict } from '../db/retry.ts';
import { ForbiddenError, NotFoundError, ValidationError, type FieldIssue } from '../domain/errors.ts';
import { checkGroup } from '../groups/service.ts';
import { createAnswerWrites, isRetryableConflict, type CreateAnswer } from '../idempotency/service.ts';
import { newId } from '../ids.ts';
import type { MessageRecord } from '../messages/api.ts';
import { addMessage } from '../messages/service.ts';
import { listAllFields, optionIdsByValue, type FieldRecord } from '../ticket-fields/api.ts';
import { planTicketUpdate, toTicketDto, updateTicket, type ChangeContext, type TicketRecord } from '../tickets/service.ts';
import { findUser } from '../users/api.ts';
import { checkActions, commentOf, editOf, optionValues, placeholders, render, type StoredAction } from './actions.ts';
import { MAX_PERSONAL_MACROS, MAX_SHARED_MACROS } from './limits.ts';
import type { CreateMacroInput, Macro, MacroAction, MacroComment, UpdateMacroInput } from './model.ts';
import * as repo from './repository.ts';
import type { MacroRecord } from './repository.ts';

/**
 * Macros (decisions §22): CRUD with the shared/personal rules and limits of
 * views; a preview (the ticket update planned, nothing written) and an apply
 * (the change and the comment as one message with its ticket_update, through
 * the message service: one transaction, audited `via: macro`). A module above
 * tickets and messages: nothing below imports it.
 */

const publicAction = ({ fieldId: _f, ...a }: StoredAction): MacroAction => a;
const toDto = ({ accountId: _a, actions, ...m }: MacroRecord): Macro => ({ ...m, actions: actions.map(publicAction) });

/** What a macro's audit lists (decisions §15), as the API answers the macro; personal macros are audited too. */
const AUDITED = ['title', 'actions', 'personal'] as const;
const macroAudit = (p: Principal, id: string, changes: AuditChange[], opts: { deleted?: boolean; at?: string } = {}) =>
  auditWrite({ accountId: p.accountId, resource: { type: 'macro', id }, actor: userActor(p), via: 'api', changes, ...opts });

const invalid = (issues: FieldIssue[]) => new ValidationError(`Invalid macro: ${issues.map((i) => `${i.field}: ${i.message}`).join('; ')}`, issues);

const visible = (m: Pick<MacroRecord, 'personal' | 'ownerId'>, p: Principal) => !m.personal || m.ownerId === p.userId;

function mayChange(m: Pick<MacroRecord, 'personal'>, p: Principal) {
  if (!m.personal && !hasDeskRole(p.role, 'admin')) throw new ForbiddenError('Only admins create, change or delete shared macros');
}

/** Check actions as a ticket update would (decisions §6): shapes, the assignee, the group, custom fields and their options. */
async function storedActions(accountId: string, actions: readonly MacroAction[]): Promise<StoredAction[]> {
  const custom = actions.some((a) => a.field.startsWith('customFields.'));
  const fields: FieldRecord[] = custom ? await listAllFields(accountId) : [];
  const { issues, stored } = checkActions(actions, { fieldsByKey: new Map(fields.map((f) => [f.fieldKey, f])) });
  const at = (field: string) => actions.findIndex((a) => a.field === field);
  const assignee = stored.find((a) => a.field === 'assigneeId');
  if (assignee && typeof assignee.value === 'string' && !issues.some((i) => i.field === `actions.${at('assigneeId')}.value`)) {
    const user = await findUser(accountId, assignee.value);
    if (user?.status !== 'active' || !hasDeskRole(user.role, 'agent'))
      issues.push({ field: `actions.${at('assigneeId')}.value`, message: 'must be an active user of the account with agent role or above' });
  }
  const group = stored.find((a) => a.field === 'groupId');
  if (group && typeof group.value === 'string' && !issues.some((i) => i.field === `actions.${at('groupId')}.value`)) {
    const found: FieldIssue[] = [];
    await checkGroup(accountId, group.value, found);
    issues.push(...found.map((i) => ({ field: `actions.${at('groupId')}.value`, message: i.message })));
  }
  const byId = new Map(fields.map((f) => [f.id, f]));
  for (const [fieldId, { index, values }] of optionValues(stored, byId)) {
    const known = await optionIdsByValue(accountId, fieldId, values);
    const unknown = values.filter((v) => !known.has(v));
    if (unknown.length && !issues.some((i) => i.field === `actions.${index}.value`))
      issues.push({ field: `actions.${index}.value`, message: `${unknown.map((v) => `"${v}"`).join(', ')} is not an option of ${byId.get(fieldId)!.fieldKey}` });
  }
  if (issues.length) throw invalid(issues);
  return stored;
}

export async function listMacros(p: Principal): Promise<Macro[]> {
  const { macros } = await repo.loadMacros(p.accountId);
  return macros.filter((m) => visible(m, p)).map(toDto);
}

async function findVisible(p: Principal, id: string): Promise<MacroRecord> {
  const m = await repo.getMacro(p.accountId, id);
  if (!m || !visible(m, p)) throw new NotFoundError('Macro');
  return m;
}

export const getMacro = async (p: Principal, id: string): Promise<Macro> => toDto(await findVisible(p, id));

export async function createMacro(p: Principal, input: CreateMacroInput, opts: CreateAnswer<Macro> = {}): Promise<Macro> {
  mayChange(input, p);
  const actions = await storedActions(p.accountId, input.actions);
  return retryOnConflict(async () => {
    const { version, macros } = await repo.loadMacros(p.accountId);
    if (input.personal && macros.filter((m) => m.personal && m.ownerId === p.userId).length >= MAX_PERSONAL_MACROS)
      throw invalid([{ field: 'personal', message: `a user has at most ${MAX_PERSONAL_MACROS} personal macros` }]);
    if (!input.personal && macros.filter((m) => !m.personal).length >= MAX_SHARED_MACROS) throw invalid([{ field: 'body', message: `an account has at most ${MAX_SHARED_MACROS} shared macros` }]);
    const now = new Date().toISOString();
    const record: MacroRecord = {
      id: newId('mac'),
      accountId: p.accountId,
      title: input.title,
      actions,
      personal: input.personal,
      ownerId: input.personal ? p.userId : null,
      createdAt: now,
      updatedAt: now,
    };
    const created = toDto(record);
    // Its answer commits with it (docs/decisions.md "Ambiguous writes"): a retry with the key after a lost answer
    // answers this macro instead of making a second one.
    await repo.commitMacros(p.accountId, version, [repo.putMacroWrite(record), macroAudit(p, record.id, diffFields(null, created, AUDITED), { at: now }), ...createAnswerWrites(opts, created)]);
    return created;
  }, isRetryableConflict);
}

export async function updateMacro(p: Principal, id: string, input: UpdateMacroInput): Promise<Macro> {
  const actions = input.actions && (await storedActions(p.accountId, input.actions));
  return retryOnConflict(async () => {
    const { version, macros } = await repo.loadMacros(p.accountId);
    const current = macros.find((m) => m.id === id);
    if (!current || !visible(current, p)) throw new NotFoundError('Macro');
    mayChange(current, p);
    if (input.personal !== undefined && input.personal !== current.personal) throw invalid([{ field: 'personal', message: 'a macro cannot change between personal and shared; create a new one' }]);
    const record: MacroRecord = { ...current, ...(input.title !== undefined ? { title: input.title } : {}), ...(actions ? { actions } : {}), updatedAt: new Date().toISOString() };
    // The same values given again still write but record no audit: nothing changed.
    const changes = diffFields(toDto(current), toDto(record), AUDITED);
    await repo.commitMacros(p.accountId, version, [repo.putMacroWrite(record), ...(changes.length ? [macroAudit(p, id, changes, { at: record.updatedAt })] : [])]);
    return toDto(record);
  });
}

export async function deleteMacro(p: Principal, id: string): Promise<void> {
  await retryOnConflict(async () => {
    const { version, macros } = await repo.loadMacros(p.accountId);
    const current = macros.find((m) => m.id === id);
    if (!current || !visible(current, p)) throw new NotFoundError('Macro');
    mayChange(current, p);
    await repo.commitMacros(p.accountId, version, [repo.deleteMacroWrite(p.accountId, id), macroAudit(p, id, [], { deleted: true })]);
  });
}

const contextOf = (m: MacroRecord): Omit<ChangeContext, 'messageId'> => ({ via: 'macro', actor: { type: 'macro', id: m.id } });

/** What the macro would do to the ticket now: the ticket after its actions (every rule of a PUT checked) and its comment rendered. */
async function plan(p: Principal, ticketId: string, m: MacroRecord): Promise<{ next: TicketRecord; comment: MacroComment | null }> {
  const [planned, agent] = await Promise.all([planTicketUpdate(p, ticketId, editOf(m.actions), contextOf(m)), findUser(p.accountId, p.userId)]);
  const comment = commentOf(m.actions);
  return { next: planned.next, comment: comment && { type: comment.type, content: render(comment.content, placeholders(planned.next, agent?.name ?? null)) } };
}

/** decisions §22 preview: nothing is written. */
export async function previewMacro(p: Principal, ticketId: string, macroId: string) {
  const m = await findVisible(p, macroId);
  const { next, comment } = await plan(p, ticketId, m);
  return { ticket: toTicketDto(next), comment };
}

/**
 * Apply a macro: with a comment, one message whose ticket update is the
 * macro's actions (one transaction, mailed as any response); without one, the
 * ticket change alone. Both audited `via: macro`, the macro as actor.
 */
export async function applyMacro(p: Principal, ticketId: string, macroId: string): Promise<{ ticket: TicketRecord; message: MessageRecord | null }> {
  const m = await findVisible(p, macroId);
  const { comment } = await plan(p, ticketId, m);
  if (!comment) return { ticket: await updateTicket(p, ticketId, editOf(m.actions), contextOf(m)), message: null };
  const { message, ticket } = await addMessage(
    p,
    { ticket_id: ticketId, type: comment.type, content: comment.content, send_email: true, is_forward: false },
    { edit: editOf(m.actions), context: contextOf(m) },
  );
  return { ticket, message };
}
