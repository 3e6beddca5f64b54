import { bindEntity, conditions } from '../db/entity.ts';
import { macroEntities } from '../db/entities/macros.ts';
import { queryAll } from '../db/query.ts';
import { transactWrite, type TxWrite } from '../db/transact.ts';
import { ConflictError } from '../domain/errors.ts';
import type { StoredAction } from './actions.ts';

/** A macro as stored. */
export interface MacroRecord {
  id: string;
  accountId: string;
  title: string;
  actions: StoredAction[];
  personal: boolean;
  ownerId: string | null;
  createdAt: string;
  updatedAt: string;
}

const sets = bindEntity<{ accountId: string; version: number }>(macroEntities.macroSet, { fields: ['accountId', 'version'] });
const macros = bindEntity<MacroRecord>(macroEntities.macro, { fields: ['id', 'accountId', 'title', 'actions', 'personal', 'ownerId', 'createdAt', 'updatedAt'] });

/** Thrown when another write changed the account's macros since they were read; the service re-reads. */
export class StaleMacrosError extends ConflictError {}

/** The set's version and every macro of an account: one Query (the set item shares the prefix). */
export async function loadMacros(accountId: string): Promise<{ version: number; macros: MacroRecord[] }> {
  const items = await queryAll<Record<string, unknown>>({ ...macros.query('withSet', { accountId }, { skBeginsWith: sets.key({ accountId }).sk }), consistent: true });
  const setItem = items.find((i) => i.type === macroEntities.macroSet.type);
  return { version: setItem ? Number(sets.fromItem(setItem).version) : 0, macros: items.filter((i) => i.type === macroEntities.macro.type).map(macros.fromItem) };
}

export const getMacro = (accountId: string, id: string) => macros.get({ accountId, id });
export const putMacroWrite = (m: MacroRecord): TxWrite => macros.put(m);
export const deleteMacroWrite = (accountId: string, id: string): TxWrite => macros.delete({ accountId, id });

/** Commit macro writes with the set's next version, if the set is still at the version read. */
export async function commitMacros(accountId: string, readVersion: number, writes: TxWrite[]): Promise<void> {
  const stale = () => new StaleMacrosError('The macros were changed concurrently; retry the request');
  await transactWrite([sets.put({ accountId, version: readVersion + 1 }, readVersion === 0 ? conditions.absent(stale) : conditions.version('version', readVersion, stale)), ...writes]);
}
