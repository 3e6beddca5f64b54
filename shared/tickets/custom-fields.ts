import type { TxWrite } from '../db/transact.ts';
import type { FieldIssue } from '../domain/errors.ts';
import { listAllFields, optionIdsByValue, optionUsageWrite, type FieldRecord } from '../ticket-fields/api.ts';
import { optionValuesOf, type CustomFieldValue } from '../ticket-fields/values.ts';

/** An account's custom fields by id: the ticket validator's one Query. */
export const fieldMap = async (accountId: string) => new Map((await listAllFields(accountId)).map((f) => [f.id, f]));

/**
 * Option usage deltas between two sets of custom-field values, as writes for
 * the ticket's transaction; unknown option values become validation issues.
 */
export async function optionUsageWrites(accountId: string, fields: Map<string, FieldRecord>, before: CustomFieldValue[], after: CustomFieldValue[], issues: FieldIssue[]): Promise<TxWrite[]> {
  const writes: TxWrite[] = [];
  const valuesOf = (list: CustomFieldValue[], id: string) => new Set(optionValuesOf(fields.get(id), list.find((c) => c.id === id)?.value));
  const ids = new Set([...before, ...after].map((c) => c.id).filter((id) => fields.has(id)));
  for (const id of ids) {
    const old = valuesOf(before, id);
    const now = valuesOf(after, id);
    const added = [...now].filter((v) => !old.has(v));
    const removed = [...old].filter((v) => !now.has(v));
    if (!added.length && !removed.length) continue;
    const optionIds = await optionIdsByValue(accountId, id, [...added, ...removed]);
    for (const v of added) {
      const optionId = optionIds.get(v);
      if (!optionId) issues.push({ field: 'customFields', message: `"${v}" is not an option of ${fields.get(id)!.fieldKey}` });
      else writes.push(optionUsageWrite(accountId, id, optionId, 1));
    }
    for (const v of removed) {
      const optionId = optionIds.get(v);
      if (optionId) writes.push(optionUsageWrite(accountId, id, optionId, -1));
    }
  }
  return writes;
}
